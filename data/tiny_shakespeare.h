// tiny_shakespeare.h: getting Tiny Shakespeare (1.1 MB, Karpathy's char-rnn corpus) onto disk.
//
// The repository ships the text in data/corpora/tinyshakespeare.txt (public domain; see
// data/corpora/README.md). ensure_tiny_shakespeare() returns a path to a verified copy, trying in order:
//   1. $SF_TINYSHAKESPEARE, when set (an error if that file is missing or has another sha256);
//   2. <cache_dir>/tinyshakespeare.txt, from an earlier download;
//   3. the search list (by default the shipped copy: its absolute path in the source tree this
//      build was configured from, so any working directory finds it, then
//      data/corpora/tinyshakespeare.txt relative to the working directory, for a moved tree);
//   4. a download of kTinyShakespeareUrl with curl (or wget) into the cache, checked against
//      kTinyShakespeareSha256 and moved into place atomically.
// Offline, the DataError says exactly where to put the file. Every copy is checked by sha256.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace sf::data {

inline constexpr const char* kTinyShakespeareUrl =
    "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt";
inline constexpr const char* kTinyShakespeareSha256 =
    "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed";

// The copy shipped in the source tree: <source dir>/data/corpora/tinyshakespeare.txt, absolute.
std::filesystem::path shipped_tiny_shakespeare();

// The default search list: shipped_tiny_shakespeare(), then data/corpora/tinyshakespeare.txt.
std::vector<std::filesystem::path> default_shakespeare_search();

struct ShakespeareOptions {
  std::filesystem::path cache_dir;  // the download lands in cache_dir/tinyshakespeare.txt
  std::string url = kTinyShakespeareUrl;
  std::vector<std::filesystem::path> search = default_shakespeare_search();
  bool use_env = true;   // honour $SF_TINYSHAKESPEARE
  bool download = true;  // false: only look for existing copies
  int timeout_seconds = 120;
};

// $SF_DATA_DIR if set, else $XDG_CACHE_HOME/scratchformer, else ~/.cache/scratchformer.
std::filesystem::path default_cache_dir();

// The path of a verified copy of Tiny Shakespeare (see above); DataError otherwise.
std::filesystem::path ensure_tiny_shakespeare(const std::filesystem::path& cache_dir);
std::filesystem::path ensure_tiny_shakespeare(const ShakespeareOptions& options);

// Runs `argv` (argv[0] looked up in PATH) without a shell, stdout discarded, stderr saved to
// `stderr_file`. Returns the exit status, 127 when the program cannot be started.
int run_command(const std::vector<std::string>& argv, const std::filesystem::path& stderr_file);

}  // namespace sf::data

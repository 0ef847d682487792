// Tiny Shakespeare: the shipped copy found from any working directory, finding a verified copy,
// a (local, file://) download, the offline message.
// Nothing here reaches the internet: the "offline" case downloads from a closed local port.
#include <doctest/doctest.h>

#include <cstdlib>

#include "autograd/errors.h"
#include "data/file_io.h"
#include "data/sha256.h"
#include "data/text_dataset.h"
#include "data/tiny_shakespeare.h"
#include "test_helpers.h"

using namespace sf;
using namespace sf::data;
using sf::test::contains;
using sf::test::error_of;

// The copy the repository ships.
static const std::filesystem::path kShipped = std::filesystem::path(SF_SOURCE_DIR) / "data/corpora/tinyshakespeare.txt";

// Options that look nowhere but where the test says.
static ShakespeareOptions isolated(const std::filesystem::path& cache) {
  ShakespeareOptions o;
  o.cache_dir = cache;
  o.search = {};
  o.use_env = false;
  o.timeout_seconds = 10;
  return o;
}

TEST_CASE("tiny shakespeare: offline, the error says where to put the file, nothing is left behind") {
  sf::test::TempDir dir("shk_offline");
  ShakespeareOptions o = isolated(dir / "cache");
  o.url = "http://127.0.0.1:9/input.txt";  // the discard port: connection refused at once
  std::string msg = error_of<DataError>([&] { ensure_tiny_shakespeare(o); });
  MESSAGE(msg);
  CHECK(contains(msg, "could not download Tiny Shakespeare from http://127.0.0.1:9/input.txt (curl exited with 7"));
  CHECK(contains(msg, "put the file at " + (dir / "cache/tinyshakespeare.txt").string()));
  CHECK(contains(msg, "SF_TINYSHAKESPEARE=/path/to/input.txt"));
  CHECK(contains(msg, kTinyShakespeareSha256));
  CHECK(sf::test::count_files(dir / "cache") == 0);
  o.download = false;
  CHECK(contains(error_of<DataError>([&] { ensure_tiny_shakespeare(o); }),
                 "Tiny Shakespeare not found and downloading is off. If this machine is offline"));
}

TEST_CASE("tiny shakespeare: a download with the wrong sha256 is refused and not saved") {
  sf::test::TempDir dir("shk_badsha");
  sf::test::write_bytes(dir / "fake.txt", "To be, or not to be: that is a fake.\n");
  ShakespeareOptions o = isolated(dir / "cache");
  o.url = "file://" + (dir / "fake.txt").string();
  std::string msg = error_of<DataError>([&] { ensure_tiny_shakespeare(o); });
  CHECK(contains(msg, "but its sha256 is " + sha256_hex("To be, or not to be: that is a fake.\n") + ", expected " +
                          kTinyShakespeareSha256 + "; nothing was saved"));
  CHECK(sf::test::count_files(dir / "cache") == 0);
}

TEST_CASE("tiny shakespeare: the shipped copy is found by default from any working directory") {
  CHECK(shipped_tiny_shakespeare() == kShipped);
  CHECK(sha256_hex(read_file_bytes(kShipped)) == kTinyShakespeareSha256);
  sf::test::TempDir dir("shk_cwd");
  ShakespeareOptions o;  // the default search list
  o.cache_dir = dir / "cache";
  o.use_env = false;
  o.download = false;
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path);  // a working directory with no data/ in it
  std::filesystem::path found;
  try {
    found = ensure_tiny_shakespeare(o);
  } catch (...) {
    std::filesystem::current_path(cwd);
    throw;
  }
  // From the source root, a relative data/corpora/ copy is found too (for a moved tree).
  std::filesystem::current_path(SF_SOURCE_DIR);
  o.search = {"data/corpora/tinyshakespeare.txt"};
  std::filesystem::path relative = ensure_tiny_shakespeare(o);
  std::filesystem::current_path(cwd);
  CHECK(found == kShipped);
  CHECK(relative == "data/corpora/tinyshakespeare.txt");
  CHECK(sf::test::count_files(dir.path) == 0);  // nothing downloaded or cached
}

TEST_CASE("tiny shakespeare: existing copies, $SF_TINYSHAKESPEARE and a local download") {
  sf::test::TempDir dir("shk_found");
  ShakespeareOptions o = isolated(dir / "cache");
  o.download = false;
  o.search = {dir / "nowhere.txt", kShipped};
  CHECK(ensure_tiny_shakespeare(o) == kShipped);

  // $SF_TINYSHAKESPEARE wins, and is checked.
  o.use_env = true;
  o.search = {};
  ::setenv("SF_TINYSHAKESPEARE", kShipped.c_str(), 1);
  CHECK(ensure_tiny_shakespeare(o) == kShipped);
  sf::test::write_bytes(dir / "other.txt", "not shakespeare");
  ::setenv("SF_TINYSHAKESPEARE", (dir / "other.txt").c_str(), 1);
  CHECK(contains(error_of<DataError>([&] { ensure_tiny_shakespeare(o); }),
                 "other.txt (from $SF_TINYSHAKESPEARE): sha256 is "));
  ::unsetenv("SF_TINYSHAKESPEARE");
  o.use_env = false;

  // A "download" through curl from a file:// URL: verified, saved atomically, then reused.
  o.download = true;
  o.url = "file://" + kShipped.string();
  std::filesystem::path got = ensure_tiny_shakespeare(o);
  CHECK(got == dir / "cache/tinyshakespeare.txt");
  CHECK(sha256_hex(read_file_bytes(got)) == kTinyShakespeareSha256);
  CHECK(sf::test::count_files(dir / "cache") == 1);  // no .part or .log files
  o.url = "http://127.0.0.1:9/unused";
  CHECK(ensure_tiny_shakespeare(o) == got);  // the cached copy, no download

  // And it loads as a char-level dataset: 65 characters, like nanoGPT's shakespeare_char.
  LmData d = load_text_dataset(sf::test::text_cfg(got, 0.1, 64, false), TokenizerConfig{});
  CHECK(d.tokenizer->vocab_size() == 65);
  CHECK(d.train->size() + d.val->size() == 1115394);
}

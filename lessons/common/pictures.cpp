// pictures.cpp: drawing a lesson's pictures into its stream's image folder (see pictures.h).
#include "lessons/common/pictures.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <system_error>

#include "lessons/lesson.h"
#include "train/metrics.h"

namespace sf::lessons {

// Prints the picture's line; returns the path to draw to, or "" when the stream has no folder.
static std::string announce(std::ostream& out, const std::string& file) {
  out << tr(out, "picture: images/", "图：images/") << file << "\n";
  std::string dir = image_dir(out);
  if (dir.empty()) return "";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);  // a failure shows as gnuplot's note on the draw
  return dir + "/" + file;
}

void draw_gnuplot(std::ostream& out, const std::string& file, const std::string& body, int width, int height) {
  std::string path = announce(out, file);
  if (path.empty()) return;
  std::string note = render_gnuplot_png(body, path, width, height);
  if (!note.empty()) std::cerr << note << "\n";
}

// `path` as one shell word: single-quoted, each ' written as '\''.
static std::string shell_quoted(const std::string& path) {
  std::string q = "'";
  for (char ch : path) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

void draw_graphviz(std::ostream& out, const std::string& file, const std::function<std::string()>& dot_source) {
  std::string path = announce(out, file);
  if (path.empty()) return;
  if (std::system("command -v dot >/dev/null 2>&1") != 0) {
    std::cerr << "no image: Graphviz's dot is not installed (apt install graphviz)\n";
    return;
  }
  const std::string dot = dot_source(), tmp = path + ".tmp.png";
  // 110 dpi: labels of 12 points come out about 18 pixels high, readable on a page without zoom.
  FILE* p = ::popen(("dot -Tpng -Gdpi=110 -o " + shell_quoted(tmp) + " >/dev/null 2>&1").c_str(), "w");
  if (!p) {
    std::cerr << "no image: could not start dot\n";
    return;
  }
  std::fwrite(dot.data(), 1, dot.size(), p);
  int rc = ::pclose(p);
  std::error_code ec;
  if (rc != 0 || !std::filesystem::exists(tmp, ec)) {
    std::filesystem::remove(tmp, ec);
    std::cerr << "no image: dot failed (exit " << rc << ") on " << path << "\n";
    return;
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::cerr << "no image: could not move " << tmp << " to " << path << ": " << ec.message() << "\n";
}

void draw_attention(std::ostream& out, const std::string& file, const AttentionMaps& maps, int64_t layer,
                    const std::string& title) {
  std::string path = announce(out, file);
  if (path.empty()) return;
  std::string note = draw_attention_png(maps, layer, path, title);
  if (!note.empty()) std::cerr << note << "\n";
}

AttentionMaps attention_maps_of(const std::vector<double>& weights, int64_t H, const std::vector<std::string>& queries,
                                const std::vector<std::string>& keys) {
  AttentionMaps m;
  m.labels = queries;
  if (keys != queries) m.key_labels = keys;
  const size_t T = queries.size(), S = keys.size();
  m.weights.assign(1, std::vector<std::vector<std::vector<double>>>(static_cast<size_t>(H)));
  for (size_t h = 0; h < static_cast<size_t>(H); ++h)
    for (size_t q = 0; q < T; ++q)
      m.weights[0][h].emplace_back(weights.begin() + static_cast<std::ptrdiff_t>((h * T + q) * S),
                                   weights.begin() + static_cast<std::ptrdiff_t>((h * T + q + 1) * S));
  return m;
}

}  // namespace sf::lessons

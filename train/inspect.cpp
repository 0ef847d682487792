// inspect.cpp: attention maps of a trained GPT, their pictures and page, and head roles.
#include "train/inspect.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "autograd/errors.h"
#include "autograd/graph.h"
#include "data/utf8.h"
#include "train/metrics.h"

namespace sf {

using json = nlohmann::json;

static std::string num(const char* format, double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

AttentionMaps attention_maps(GPT& model, const std::vector<int32_t>& ids, const std::vector<std::string>& labels) {
  const int64_t T = static_cast<int64_t>(ids.size());
  if (T == 0) throw ConfigError("--prompt: encodes to no tokens");
  if (T > model.config().block_size)
    throw ConfigError("--prompt: " + std::to_string(T) + " tokens, more than the model's block_size " +
                      std::to_string(model.config().block_size) + "; shorten it");
  bool was_training = model.training();
  model.eval();
  NoGradGuard no_grad;
  model.keep_attention(true);
  model.forward(IntTensor({1, T}, ids));
  AttentionMaps m;
  m.ids = ids;
  m.labels = labels;
  const int64_t L = model.config().n_layer, H = model.config().n_head;
  for (int64_t l = 0; l < L; ++l) {
    Tensor a = model.attention(l).to(DType::f64);  // (1, H, T, T)
    const double* w = a.data<double>();
    m.weights.emplace_back(H, std::vector<std::vector<double>>(T, std::vector<double>(T)));
    for (int64_t h = 0; h < H; ++h)
      for (int64_t q = 0; q < T; ++q)
        for (int64_t k = 0; k < T; ++k) m.weights[l][h][q][k] = w[(h * T + q) * T + k];
  }
  model.keep_attention(false);
  model.train(was_training);
  return m;
}

std::vector<HeadRole> head_roles(const AttentionMaps& m) {
  std::vector<HeadRole> roles;
  const int64_t T = m.length();
  for (int64_t l = 0; l < m.layers(); ++l) {
    for (int64_t h = 0; h < m.heads(); ++h) {
      const auto& w = m.weights[l][h];
      HeadRole r;
      r.layer = l, r.head = h;
      int64_t same_rows = 0;
      for (int64_t q = 0; q < T; ++q) {
        for (int64_t k = 0; k <= q; ++k)
          if (w[q][k] > 0) r.entropy -= w[q][k] * std::log(w[q][k]);
        if (q == 0) continue;
        r.prev += w[q][q - 1];
        r.first += w[q][0];
        double same = 0;
        bool repeats = false;
        for (int64_t k = 0; k < q; ++k)
          if (m.ids[k] == m.ids[q]) same += w[q][k], repeats = true;
        if (repeats) r.same += same, ++same_rows;
      }
      r.entropy /= static_cast<double>(T);
      if (T > 1) r.prev /= static_cast<double>(T - 1), r.first /= static_cast<double>(T - 1);
      r.has_same = same_rows > 0;
      if (r.has_same) r.same /= static_cast<double>(same_rows);
      roles.push_back(r);
    }
  }
  return roles;
}

std::string token_label(const std::string& bytes) {
  if (data::utf8_first_error(bytes) >= 0) {  // part of a character (byte-level BPE): show the bytes
    std::string out = "<";
    for (unsigned char b : bytes) {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned>(b));
      out += (out.size() > 1 ? " " : "") + std::string(hex);
    }
    return out + ">";
  }
  std::string out;
  for (char ch : bytes) out += ch == '\n' ? "\\n" : ch == '\t' ? "\\t" : ch == ' ' ? "\u2423" : std::string(1, ch);
  return out;
}

// `s` cut or padded to `width` characters (code points, not bytes: a label may be Chinese).
static std::string fit(const std::string& s, size_t width) {
  std::vector<char32_t> cps = data::utf8_decode(s);
  cps.resize(std::min(cps.size(), width));
  return data::utf8_encode(cps) + std::string(width - cps.size(), ' ');
}

std::string format_attention(const AttentionMaps& m, int64_t layer, int64_t head) {
  std::ostringstream out;
  out << "layer " << layer << ", head " << head << " (row: the query token; columns: the tokens it attends to)\n";
  out << "        ";
  for (const std::string& s : m.keys()) out << " " << fit(s, 5);
  out << "\n";
  const bool causal = m.key_labels.empty();
  for (int64_t q = 0; q < m.length(); ++q) {
    out << "  " << fit(m.labels[q], 6);
    for (int64_t k = 0; k < m.key_length(); ++k)
      out << " " << (!causal || k <= q ? num("%5.2f", m.weights[layer][head][q][k]) : "    .");
    out << "\n";
  }
  return out.str();
}

std::string format_head_roles(const std::vector<HeadRole>& roles) {
  std::string out = "layer  head    prev   first    same  entropy\n";
  for (const HeadRole& r : roles) {
    char line[96];
    std::snprintf(line, sizeof line, "%5lld %5lld %7.3f %7.3f %7s %8.3f\n", static_cast<long long>(r.layer),
                  static_cast<long long>(r.head), r.prev, r.first, r.has_same ? num("%.3f", r.same).c_str() : "-",
                  r.entropy);
    out += line;
  }
  return out;
}

// A label inside a gnuplot single-quoted string ('' is a quote).
static std::string gnuplot_quoted(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("''") : std::string(1, ch);
  return out + "'";
}

AttentionLayout attention_layout(int64_t heads, int64_t queries, int64_t keys) {
  // Pixels around the maps: the query labels and "query" left of each map, the key labels and
  // "attends to" below, the head's and the picture's titles above, the colour scale at the right.
  constexpr double kLeft = 80, kGap = 90, kRight = 120, kBottom = 90, kTop = 70, kMaxWidth = 2400, kMaxSide = 1200;
  constexpr double kBarGap = 15, kBarWidth = 18;  // between the last map and the colour scale; its width
  const int64_t H = std::max<int64_t>(1, heads), T = std::max<int64_t>(1, queries), S = std::max<int64_t>(1, keys);
  const double fixed = kLeft + static_cast<double>(H - 1) * kGap + kRight;
  // A map's width in pixels: 18 per key, at least 240, then narrowed to fit 2400 pixels across and
  // 1200 down (its height is width * T / S, so that a cell is square).
  double w = std::max(240.0, 18.0 * static_cast<double>(S));
  w = std::min({w, (kMaxWidth - fixed) / static_cast<double>(H), kMaxSide * static_cast<double>(S) / T});
  const double h = w * static_cast<double>(T) / static_cast<double>(S);
  AttentionLayout l;
  l.width = static_cast<int>(std::ceil(fixed + static_cast<double>(H) * w));
  l.height = static_cast<int>(std::ceil(kBottom + h + kTop));
  const double W = l.width, Hpx = l.height;
  for (int64_t i = 0; i < H; ++i) {
    const double x = kLeft + static_cast<double>(i) * (w + kGap);
    l.heads.push_back({x / W, (x + w) / W, kBottom / Hpx, (kBottom + h) / Hpx});
  }
  const double bar = kLeft + static_cast<double>(H) * w + static_cast<double>(H - 1) * kGap + kBarGap;
  l.colorbox = {bar / W, (bar + kBarWidth) / W, kBottom / Hpx, (kBottom + h) / Hpx};
  return l;
}

std::string draw_attention_png(const AttentionMaps& m, int64_t layer, const std::string& png_path,
                               const std::string& title) {
  const int64_t T = m.length(), S = m.key_length(), H = m.heads();
  auto tics_of = [](const std::vector<std::string>& labels) {
    std::string tics;
    for (size_t i = 0; i < labels.size(); ++i)
      tics += (i ? ", " : "") + gnuplot_quoted(labels[i]) + " " + std::to_string(i);
    return tics;
  };
  std::ostringstream s;
  // A CJK font (fonts-wqy-zenhei) first, so Chinese tokens are drawn, not boxes; DejaVu for the rest.
  s << "set termoption font 'WenQuanYi Zen Hei,9'\nset termoption noenhanced\n"
    << "set multiplot title " << gnuplot_quoted(title + ", layer " + std::to_string(layer)) << "\n"
    << "set palette defined (0 'white', 1 '#08306b')\nset cbrange [0:1]\n"
    << "set xrange [-0.5:" << S - 0.5 << "]\nset yrange [" << T - 0.5 << ":-0.5]\n"
    << "set xtics (" << tics_of(m.keys()) << ") rotate by 90 offset 0,0 scale 0\nset ytics (" << tics_of(m.labels)
    << ") scale 0\n"
    << "set xlabel 'attends to'\nset ylabel 'query'\nunset colorbox\n";
  // Each map in its own box, all of one size (gnuplot's `layout` would shrink the last one to fit
  // the colour scale beside it); the scale in a strip of its own.
  const AttentionLayout place = attention_layout(H, T, S);
  auto at_screen = [](double f) { return num("%.5f", f); };
  const ScreenBox& bar = place.colorbox;
  for (int64_t h = 0; h < H; ++h) {
    const ScreenBox& b = place.heads[static_cast<size_t>(h)];
    s << "set lmargin at screen " << at_screen(b.left) << "\nset rmargin at screen " << at_screen(b.right)
      << "\nset bmargin at screen " << at_screen(b.bottom) << "\nset tmargin at screen " << at_screen(b.top) << "\n";
    if (h == H - 1)
      s << "set colorbox user origin " << at_screen(bar.left) << "," << at_screen(bar.bottom) << " size "
        << at_screen(bar.right - bar.left) << "," << at_screen(bar.top - bar.bottom) << "\n";
    s << "$head" << h << " << EOD\n";
    for (int64_t q = 0; q < T; ++q) {
      for (int64_t k = 0; k < S; ++k) s << (k ? " " : "") << num("%.6f", m.weights[layer][h][q][k]);
      s << "\n";
    }
    s << "EOD\nset title 'head " << h << "'\nplot $head" << h << " matrix with image notitle\n";
  }
  s << "unset multiplot\n";
  return render_gnuplot_png(s.str(), png_path, place.width, place.height);
}

std::string attention_json(const AttentionMaps& m) {
  json weights = json::array();
  for (const auto& layer : m.weights) {
    json heads = json::array();
    for (const auto& head : layer) {
      json rows = json::array();
      for (const auto& row : head) {
        json r = json::array();
        for (double w : row) r.push_back(std::round(w * 1e6) / 1e6);
        rows.push_back(r);
      }
      heads.push_back(rows);
    }
    weights.push_back(heads);
  }
  return json{{"labels", m.labels}, {"key_labels", m.keys()}, {"weights", weights}}.dump(
      -1, ' ', false, json::error_handler_t::replace);
}

// The page: a layer menu, the prompt's tokens, and per head a grid of cells (query rows, key
// columns) whose shade is the weight. Hovering a token highlights its row in every head and
// lists where each head looks. Every cell carries its weight in data-w, so a test can read the
// numbers back from the DOM after the script has built it.
std::string attention_html(const AttentionMaps& m, const std::string& title) {
  std::string data = attention_json(m);
  // Inside <script>, "</" would end the element: JSON allows "<\/" for it.
  for (size_t p = data.find("</"); p != std::string::npos; p = data.find("</", p + 3)) data.replace(p, 2, "<\\/");
  std::string safe_title = json(title).dump(-1, ' ', false, json::error_handler_t::replace);
  return R"HTML(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>attention</title>
<style>
body { font-family: sans-serif; margin: 1.5em; }
#tokens span { display: inline-block; padding: 2px 4px; margin: 1px; border: 1px solid #ccc; cursor: pointer; font-family: monospace; }
#tokens span.on { background: #fde68a; }
.head { display: inline-block; vertical-align: top; margin: 0 1.5em 1.5em 0; }
.grid { display: grid; gap: 1px; background: #eee; }
.cell { width: 16px; height: 16px; }
.cell.row { outline: 2px solid #d97706; }
#where { font-family: monospace; white-space: pre; }
</style></head>
<body>
<h1 id="title"></h1>
<p>Each grid is one head: row = the query token, column = the token it attends to; darker = more
attention (rows sum to 1). Hover a token to see where every head looks from it.</p>
<label>layer <select id="layer"></select></label>
<div id="tokens"></div>
<div id="heads"></div>
<div id="where"></div>
<script id="data" type="application/json">)HTML" +
         data + R"HTML(</script>
<script>
const data = JSON.parse(document.getElementById('data').textContent);
document.getElementById('title').textContent = )HTML" +
         safe_title + R"HTML(;
const T = data.labels.length, S = data.key_labels.length, L = data.weights.length, H = data.weights[0].length;
const menu = document.getElementById('layer');
for (let l = 0; l < L; l++) { const o = document.createElement('option'); o.value = l; o.textContent = 'layer ' + l; menu.appendChild(o); }
const tokens = document.getElementById('tokens');
data.labels.forEach((s, q) => {
  const t = document.createElement('span'); t.textContent = s; t.dataset.q = q;
  t.addEventListener('mouseenter', () => show(q)); tokens.appendChild(t);
});
function draw() {
  const l = +menu.value, heads = document.getElementById('heads');
  heads.innerHTML = '';
  for (let h = 0; h < H; h++) {
    const box = document.createElement('div'); box.className = 'head';
    box.innerHTML = '<div>head ' + h + '</div>';
    const grid = document.createElement('div'); grid.className = 'grid';
    grid.style.gridTemplateColumns = 'repeat(' + S + ', 16px)';
    for (let q = 0; q < T; q++) for (let k = 0; k < S; k++) {
      const w = data.weights[l][h][q][k], c = document.createElement('div');
      c.className = 'cell'; c.dataset.layer = l; c.dataset.head = h; c.dataset.q = q; c.dataset.k = k;
      c.dataset.w = w.toFixed(6); c.title = data.labels[q] + ' -> ' + data.key_labels[k] + ': ' + w.toFixed(3);
      c.style.background = 'rgba(8, 48, 107, ' + w + ')'; grid.appendChild(c);
    }
    box.appendChild(grid); heads.appendChild(box);
  }
}
function show(q) {
  const l = +menu.value;
  document.querySelectorAll('#tokens span').forEach(t => t.classList.toggle('on', +t.dataset.q === q));
  document.querySelectorAll('.cell').forEach(c => c.classList.toggle('row', +c.dataset.q === q));
  let text = 'from "' + data.labels[q] + '" (layer ' + l + '):\n';
  for (let h = 0; h < H; h++) {
    const row = data.weights[l][h][q].map((w, k) => [w, k]).sort((a, b) => b[0] - a[0]).slice(0, 3);
    text += '  head ' + h + ': ' + row.map(p => '"' + data.key_labels[p[1]] + '" ' + p[0].toFixed(2)).join(', ') + '\n';
  }
  document.getElementById('where').textContent = text;
}
menu.addEventListener('change', draw);
draw();
</script>
</body></html>
)HTML";
}

}  // namespace sf

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

// The pixels a tick label needs along an axis: about 7 per ASCII character and 13 per wider one
// (a CJK character is as wide as it is high, at 9 points), for the widest label; across the axis
// a label needs one line, 13 pixels.
static double label_pixels(const std::vector<std::string>& labels) {
  double widest = 0;
  for (const auto& l : labels) {
    double w = 0;
    for (unsigned char ch : l)
      if (ch < 0x80) w += 7;
      else if (ch >= 0xC0) w += 13;  // a UTF-8 lead byte: one wide character
    widest = std::max(widest, w);
  }
  return widest + 4;
}

// gnuplot's tics for `labels`, every `stride`-th one, so that neighbours never overlap.
static std::string tics_of(const std::vector<std::string>& labels, int64_t stride) {
  std::string tics;
  for (size_t i = 0; i < labels.size(); i += static_cast<size_t>(stride))
    tics += (tics.empty() ? "" : ", ") + gnuplot_quoted(labels[i]) + " " + std::to_string(i);
  return tics;
}

std::string draw_attention_png(const AttentionMaps& m, int64_t layer, const std::string& png_path,
                               const std::string& title) {
  const int64_t T = m.length(), S = m.key_length(), H = m.heads();
  const AttentionLayout place = attention_layout(H, T, S);
  // A cell's side in pixels; labels stay horizontal (a rotated CJK label is hard to read), so a key
  // axis whose labels are wider than a cell labels every k-th key, and likewise for queries.
  const ScreenBox& first = place.heads.front();
  const double cell = (first.right - first.left) * place.width / static_cast<double>(S);
  auto stride = [&](double need) { return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(need / cell))); };
  const int64_t key_stride = stride(label_pixels(m.keys())), query_stride = stride(13);
  std::ostringstream s;
  // A CJK font (fonts-wqy-zenhei) first, so Chinese tokens are drawn, not boxes; DejaVu for the rest.
  s << "set termoption font 'WenQuanYi Zen Hei,9'\nset termoption noenhanced\n"
    << "set multiplot title " << gnuplot_quoted(title + ", layer " + std::to_string(layer)) << "\n"
    << "set palette defined (0 'white', 1 '#08306b')\nset cbrange [0:1]\n"
    << "set xrange [-0.5:" << S - 0.5 << "]\nset yrange [" << T - 0.5 << ":-0.5]\n"
    << "set xtics (" << tics_of(m.keys(), key_stride) << ") scale 0\nset ytics (" << tics_of(m.labels, query_stride)
    << ") scale 0\n"
    << "set xlabel 'attends to'\nset ylabel 'query'\nunset colorbox\n";
  // Each map in its own box, all of one size (gnuplot's `layout` would shrink the last one to fit
  // the colour scale beside it); the scale in a strip of its own.
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

// The head-role table: head_roles for self-attention. For cross-attention (a decoder's queries
// over an encoder's tokens) previous, first and same token mean nothing, so only each head's row
// entropy over all source tokens is given.
static json roles_json(const AttentionMaps& m) {
  json roles = json::array();
  if (m.key_labels.empty()) {
    for (const HeadRole& r : head_roles(m))
      roles.push_back({{"layer", r.layer},
                       {"head", r.head},
                       {"prev", r.prev},
                       {"first", r.first},
                       {"same", r.has_same ? json(r.same) : json(nullptr)},
                       {"entropy", r.entropy}});
    return roles;
  }
  for (int64_t l = 0; l < m.layers(); ++l)
    for (int64_t h = 0; h < m.heads(); ++h) {
      double entropy = 0;
      for (const auto& row : m.weights[l][h])
        for (double w : row)
          if (w > 0) entropy -= w * std::log(w);
      roles.push_back({{"layer", l}, {"head", h}, {"entropy", entropy / static_cast<double>(m.length())}});
    }
  return roles;
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
  json roles = roles_json(m);
  for (json& r : roles)
    for (auto& [key, value] : r.items())
      if (value.is_number_float()) value = std::round(value.get<double>() * 1e4) / 1e4;
  return json{{"labels", m.labels},
              {"key_labels", m.keys()},
              {"cross", !m.key_labels.empty()},
              {"roles", roles},
              {"weights", weights}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

// The page, in the style of bertviz's views: the heads of one layer as a grid of heat maps with
// the tokens on both axes (query rows, key columns; darker = more weight), the head-role table
// beside them, and a "lines" view joining each token to the tokens it attends to. Its words are
// in English and Chinese; <html lang> picks which show (the course site sets it). Every cell
// carries its weight in data-w, so a test can read the numbers back from the DOM after the
// script has built it. Nothing is loaded from anywhere: the data and the script are inside.
std::string attention_html(const AttentionMaps& m, const std::string& title) {
  std::string data = attention_json(m);
  // Inside <script>, "</" would end the element: JSON allows "<\/" for it.
  for (size_t p = data.find("</"); p != std::string::npos; p = data.find("</", p + 3)) data.replace(p, 2, "<\\/");
  std::string safe_title = json(title).dump(-1, ' ', false, json::error_handler_t::replace);
  return R"HTML(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>attention</title>
<style>
.ax { font-family: system-ui, "Noto Sans CJK SC", "WenQuanYi Zen Hei", sans-serif; }
html:lang(zh) .ax .en, html:not(:lang(zh)) .ax .zh { display: none; }
.ax [hidden] { display: none !important; }
.ax-help { background: #f8fafc; border: 1px solid #e2e8f0; border-radius: 6px; padding: .3em .9em; line-height: 1.45; font-size: .9em; margin-top: 1em; }
.ax-help p { margin: .4em 0; }
.ax-bar { display: flex; flex-wrap: wrap; gap: .4em 1.2em; align-items: center; margin: 1em 0; }
.ax-bar button { font: inherit; padding: .15em .7em; border: 1px solid #94a3b8; background: white; border-radius: 4px; cursor: pointer; }
.ax-bar button.on { background: #1e3a8a; color: white; border-color: #1e3a8a; }
.ax-main { display: grid; grid-template-columns: minmax(0, 1fr) 24em; gap: 1.5em; align-items: start; }
@media (max-width: 60em) { .ax-main { grid-template-columns: minmax(0, 1fr); } }
.ax-where { margin-top: 1em; }
.ax-heads { display: grid; gap: 1.2em 1.6em; }
.ax-head h3 { margin: 0 0 .3em; font-size: .95em; }
.ax-head h3 small { font-weight: normal; color: #475569; }
.grid { display: grid; gap: 1px; background: white; width: max-content; }
.cell { background: white; box-shadow: 0 0 0 1px #f1f5f9; }
.cell.row { outline: 2px solid #d97706; outline-offset: -1px; }
.lab { font-family: ui-monospace, "DejaVu Sans Mono", "WenQuanYi Zen Hei", monospace; color: #334155; background: white;
       white-space: pre; overflow: hidden; line-height: 1; display: flex; align-items: center; cursor: default; }
.lab.q { justify-content: flex-end; padding-right: 3px; }
.lab.k { writing-mode: vertical-rl; text-orientation: upright; justify-content: flex-end; padding-bottom: 3px; }
.lab.on { background: #fde68a; }
.ax-roles { border-collapse: collapse; font-size: .85em; }
.ax-roles th, .ax-roles td { border: 1px solid #e2e8f0; padding: .2em .5em; text-align: right; }
.ax-roles tr.cur td { background: #eff6ff; }
.ax-roles tr { cursor: pointer; }
.ax-roles td.v { background-repeat: no-repeat; }
.ax-lines text { font: 13px ui-monospace, "DejaVu Sans Mono", "WenQuanYi Zen Hei", monospace; cursor: default; }
.ax-where { font-family: ui-monospace, monospace; white-space: pre; min-height: 1em; }
.ax-swatch { display: inline-block; width: .8em; height: .8em; border-radius: 2px; margin-right: .3em; }
</style></head>
<body><div class="ax">
<h1 id="ax-title"></h1>
<div class="ax-bar">
<span><span class="en">layer</span><span class="zh">层</span> <span id="ax-layers"></span></span>
<span><span class="en">view</span><span class="zh">视图</span>
<button id="ax-view-grid" class="on"><span class="en">grids</span><span class="zh">热力图</span></button>
<button id="ax-view-lines"><span class="en">lines</span><span class="zh">连线</span></button></span>
<span id="ax-head-pick" hidden><span class="en">heads</span><span class="zh">头</span> <span id="ax-heads-on"></span></span>
</div>
<div class="ax-main">
<div id="ax-left">
<div id="ax-heads" class="ax-heads"></div>
<svg id="ax-lines" class="ax-lines" hidden></svg>
</div>
<div>
<table class="ax-roles" id="ax-roles"></table>
<div id="ax-where" class="ax-where"></div>
<div class="ax-help">
<p class="en"><b>How to read it.</b> Each grid is one head of the chosen layer. A row is the token
that looks (the query), a column the token it looks at (the key); the darker the cell, the more
weight, and every row sums to 1. <span class="self">A GPT sees only the tokens before it, so the part
above the diagonal is empty. A stripe just below the diagonal is a head that looks at the previous
token; a dark first column, a head that rests on the first token; pale, spread-out rows, a head
that averages (high entropy).</span><span class="cross">Rows are the decoder's output tokens, columns
the source tokens it reads through cross-attention; a model that learned to reverse its input
looks along the anti-diagonal.</span></p>
<p class="en"><span class="self">The table measures each head: <i>prev</i> is its mean weight on the
previous token, <i>first</i> on the first token, <i>same</i> on earlier copies of the current token,
<i>entropy</i> the spread of a row in nats (0: all on one token).</span><span class="cross">The table
gives each head's <i>entropy</i>, the spread of a row in nats (0: all on one token).</span> <i>Lines</i> joins every token on the left to the
tokens it attends to on the right, bolder for more weight, one colour per head; hover a token to
see only its lines. Hover a label in a grid to mark its row in every head.</p>
<p class="zh"><b>怎么看。</b>每张热力图是所选层的一个头。行是发出查看的词元（查询），列是被查看的词元（键）；
格子越深，权重越大，每一行加起来等于 1。<span class="self">GPT 只能看到它之前的词元，所以对角线以上是空的。
紧贴对角线下方的一条斜线，是看前一个词元的头；第一列很深，是停在第一个词元上的头；整行都很淡、很分散，是在求平均的头（熵高）。</span><span class="cross">行是解码器输出的词元，列是它通过交叉注意力读取的源序列词元；学会了反转输入的模型沿着反对角线看。</span></p>
<p class="zh"><span class="self">表格给每个头量了几个数：<i>prev</i> 是它放在前一个词元上的平均权重，<i>first</i> 是放在第一个词元上的，
<i>same</i> 是放在当前词元更早的相同副本上的，<i>entropy</i> 是一行权重的分散程度（单位奈特，0 表示全部落在一个词元上）。</span><span class="cross">表格给出每个头的
<i>entropy</i>：一行权重的分散程度（单位奈特，0 表示全部落在一个词元上）。</span>
<i>连线</i>视图把左边每个词元和它关注的右边词元连起来，权重越大线越粗，每个头一种颜色；把鼠标停在一个词元上，只看它的连线。
把鼠标停在热力图的标签上，会在每个头里标出这一行。</p>
</div>
</div>
</div>
<script id="data" type="application/json">)HTML" +
         data + R"HTML(</script>
<script>
(function () {
'use strict';
const data = JSON.parse(document.getElementById('data').textContent);
document.getElementById('ax-title').textContent = )HTML" +
         safe_title + R"HTML(;
const T = data.labels.length, S = data.key_labels.length, L = data.weights.length, H = data.weights[0].length;
document.querySelectorAll('.ax-help .' + (data.cross ? 'self' : 'cross')).forEach(e => e.remove());
const colours = ['#2563eb', '#dc2626', '#059669', '#d97706', '#7c3aed', '#db2777', '#0891b2', '#65a30d'];
const colour = h => colours[h % colours.length];
// Cross-attention's alignment forms in the later layers: its last layer is shown first.
let layer = data.cross ? L - 1 : 0, view = 'grid';
const headsOn = new Array(H).fill(true);
// One cell size for every grid, so the heads line up: as many maps side by side as fit the width
// with cells of at least 10 pixels (26 at most), else one map a row.
const longest = labels => Math.max(...labels.map(s => [...s].length));
const labelSpace = Math.min(90, 14 + 10 * longest(data.labels)), topSpace = Math.min(90, 14 + 10 * longest(data.key_labels));
const gap = 26;
let cell = 11, perRow = 1;
function layout() {
  const room = document.getElementById('ax-left').clientWidth || 900;
  for (perRow = Math.min(H, 4); perRow >= 1; perRow--) {
    cell = Math.floor(((room - (perRow - 1) * gap) / perRow - labelSpace) / Math.max(S, 1)) - 1;
    if (cell >= 10 || perRow === 1) break;
  }
  cell = Math.max(8, Math.min(26, cell));
}

// White (0) to dark blue (1).
function shade(w) {
  const mix = (a, b) => Math.round(a + (b - a) * Math.max(0, Math.min(1, w)));
  return 'rgb(' + mix(255, 8) + ', ' + mix(255, 48) + ', ' + mix(255, 107) + ')';
}
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function button(text, on, click) { const b = el('button', on ? 'on' : '', text); b.addEventListener('click', click); return b; }

function drawLayerButtons() {
  const box = document.getElementById('ax-layers');
  box.innerHTML = '';
  for (let l = 0; l < L; l++) box.appendChild(button(String(l), l === layer, () => { layer = l; draw(); }));
}

// The heads of the chosen layer, a grid of maps; each map a CSS grid: a corner, the key labels
// along the top, then per query its label and its S cells.
function drawGrids() {
  const heads = document.getElementById('ax-heads');
  heads.innerHTML = '';
  layout();
  const labelFont = Math.max(8, Math.min(13, cell - 1));
  heads.style.gridTemplateColumns = 'repeat(' + perRow + ', max-content)';
  heads.style.columnGap = gap + 'px';
  for (let h = 0; h < H; h++) {
    const box = el('div', 'ax-head'), title = el('h3', '', (document.documentElement.lang === 'zh' ? '头 ' : 'head ') + h + ' ');
    const r = data.roles.find(x => x.layer === layer && x.head === h);
    if (r) title.appendChild(el('small', '', roleSummary(r)));
    box.appendChild(title);
    const grid = el('div', 'grid');
    grid.style.gridTemplateColumns = labelSpace + 'px repeat(' + S + ', ' + cell + 'px)';
    grid.style.gridTemplateRows = topSpace + 'px repeat(' + T + ', ' + cell + 'px)';
    grid.style.fontSize = labelFont + 'px';
    grid.appendChild(el('div', 'lab'));
    data.key_labels.forEach((s, k) => { const d = el('div', 'lab k', s); d.dataset.k = k; grid.appendChild(d); });
    for (let q = 0; q < T; q++) {
      const lab = el('div', 'lab q', data.labels[q]);
      lab.dataset.q = q;
      lab.addEventListener('mouseenter', () => where(q));
      grid.appendChild(lab);
      for (let k = 0; k < S; k++) {
        const w = data.weights[layer][h][q][k], c = document.createElement('div');
        c.className = 'cell'; c.dataset.layer = layer; c.dataset.head = h; c.dataset.q = q; c.dataset.k = k;
        c.dataset.w = w.toFixed(6); c.title = data.labels[q] + ' → ' + data.key_labels[k] + ': ' + w.toFixed(3);
        c.style.background = shade(w);
        grid.appendChild(c);
      }
    }
    box.appendChild(grid);
    heads.appendChild(box);
  }
}

// The lines view (as bertviz's head view): queries on the left, keys on the right, a line per
// (query, key) of every chosen head, as opaque as the weight.
function drawLines() {
  const svg = document.getElementById('ax-lines'), ns = 'http://www.w3.org/2000/svg', row = 20;
  const height = Math.max(T, S) * row + 20, textWidth = Math.max(60, labelSpace + 10), gap = 180;
  const xl = textWidth, xr = textWidth + gap;
  svg.setAttribute('width', 2 * textWidth + gap + 10);
  svg.setAttribute('height', height);
  svg.innerHTML = '';
  const lines = [];
  for (let h = 0; h < H; h++) {
    if (!headsOn[h]) continue;
    for (let q = 0; q < T; q++) for (let k = 0; k < S; k++) {
      const w = data.weights[layer][h][q][k];
      if (w < 0.02) continue;
      const line = document.createElementNS(ns, 'line');
      line.setAttribute('x1', xl + 4); line.setAttribute('y1', 14 + q * row);
      line.setAttribute('x2', xr - 4); line.setAttribute('y2', 14 + k * row);
      line.setAttribute('stroke', colour(h)); line.setAttribute('stroke-opacity', w);
      line.setAttribute('stroke-width', 1 + 3 * w);
      line.dataset.q = q; line.dataset.k = k;
      svg.appendChild(line); lines.push(line);
    }
  }
  const show = (key, i) => lines.forEach(l => l.style.display = (i === null || +l.dataset[key] === i) ? '' : 'none');
  const label = (s, x, y, anchor, key, i) => {
    const t = document.createElementNS(ns, 'text');
    t.textContent = s; t.setAttribute('x', x); t.setAttribute('y', y); t.setAttribute('text-anchor', anchor);
    t.addEventListener('mouseenter', () => { show(key, i); if (key === 'q') where(i); });
    t.addEventListener('mouseleave', () => show(key, null));
    svg.appendChild(t);
  };
  data.labels.forEach((s, q) => label(s, xl - 2, 18 + q * row, 'end', 'q', q));
  data.key_labels.forEach((s, k) => label(s, xr + 2, 18 + k * row, 'start', 'k', k));
}

// A head's measures under its title: "prev 0.81 · first 0.05 · entropy 0.62".
function roleSummary(r) {
  const parts = [];
  for (const key of ['prev', 'first', 'same', 'induction', 'entropy'])
    if (typeof r[key] === 'number') parts.push(key + ' ' + r[key].toFixed(2));
  return parts.join(' · ');
}

// The role table: every head of every layer; the chosen layer's rows marked, a click chooses a
// layer. A column for each measure the data holds (an induction score too, when given).
function drawRoles() {
  const table = document.getElementById('ax-roles');
  const keys = ['prev', 'first', 'same', 'induction', 'entropy'].filter(k => data.roles.some(r => k in r));
  table.innerHTML = '';
  const head = el('tr');
  ['layer', 'head'].concat(keys).forEach(k => head.appendChild(el('th', '', k)));
  table.appendChild(head);
  const maxEntropy = Math.log(S);
  for (const r of data.roles) {
    const tr = el('tr', r.layer === layer ? 'cur' : '');
    tr.appendChild(el('td', '', r.layer));
    const h = el('td');
    const sw = el('span', 'ax-swatch'); sw.style.background = colour(r.head);
    h.appendChild(sw); h.appendChild(document.createTextNode(r.head)); tr.appendChild(h);
    for (const k of keys) {
      const v = r[k], td = el('td', 'v', typeof v === 'number' ? v.toFixed(3) : '–');
      if (typeof v === 'number') {
        const share = Math.max(0, Math.min(1, k === 'entropy' ? v / maxEntropy : v));
        td.style.backgroundImage = 'linear-gradient(to right, ' + (k === 'entropy' ? '#e9d5ff' : '#bfdbfe') + ' ' + (100 * share) + '%, transparent ' + (100 * share) + '%)';
      }
      tr.appendChild(td);
    }
    tr.addEventListener('click', () => { layer = r.layer; draw(); });
    table.appendChild(tr);
  }
}

function drawHeadPicker() {
  const box = document.getElementById('ax-heads-on');
  box.innerHTML = '';
  for (let h = 0; h < H; h++) {
    const b = button(String(h), headsOn[h], () => { headsOn[h] = !headsOn[h]; draw(); });
    if (headsOn[h]) { b.style.background = colour(h); b.style.borderColor = colour(h); }
    box.appendChild(b);
  }
}

// Where every head of the layer looks from query q: its three largest weights.
function where(q) {
  document.querySelectorAll('.lab.q').forEach(e => e.classList.toggle('on', +e.dataset.q === q));
  document.querySelectorAll('.cell').forEach(c => c.classList.toggle('row', +c.dataset.q === q));
  let text = '"' + data.labels[q] + '" (layer ' + layer + '):\n';
  for (let h = 0; h < H; h++) {
    const top = data.weights[layer][h][q].map((w, k) => [w, k]).sort((a, b) => b[0] - a[0]).slice(0, 3);
    text += '  head ' + h + ': ' + top.map(p => '"' + data.key_labels[p[1]] + '" ' + p[0].toFixed(2)).join(', ') + '\n';
  }
  document.getElementById('ax-where').textContent = text;
}

function draw() {
  drawLayerButtons();
  document.getElementById('ax-view-grid').classList.toggle('on', view === 'grid');
  document.getElementById('ax-view-lines').classList.toggle('on', view === 'lines');
  document.getElementById('ax-heads').toggleAttribute('hidden', view !== 'grid');
  document.getElementById('ax-lines').toggleAttribute('hidden', view !== 'lines');  // an SVG element has no .hidden
  document.getElementById('ax-head-pick').toggleAttribute('hidden', view !== 'lines');
  if (view === 'grid') drawGrids(); else { drawHeadPicker(); drawLines(); }
  drawRoles();
}
document.getElementById('ax-view-grid').addEventListener('click', () => { view = 'grid'; draw(); });
document.getElementById('ax-view-lines').addEventListener('click', () => { view = 'lines'; draw(); });
draw();
})();
</script>
</div></body></html>
)HTML";
}

}  // namespace sf

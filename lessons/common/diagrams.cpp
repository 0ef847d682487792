// diagrams.cpp: the idea pictures of diagrams.h as Graphviz DOT. Matrices are HTML-like tables
// (one cell per entry, shaded by value); everything else is boxes and arrows. One font for all
// labels: DejaVu Sans, with fontconfig's CJK fallback (fonts-wqy-zenhei) for Chinese tokens.
#include "lessons/common/diagrams.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "train/config.h"
#include "train/models.h"
#include "lessons/lesson.h"
#include "lessons/common/pictures.h"
#include "nn/module.h"

namespace sf::lessons {

// Text for an HTML-like label: <, >, & escaped (the tokens <s> and <pad> hold them).
static std::string esc(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '<') r += "&lt;";
    else if (c == '>') r += "&gt;";
    else if (c == '&') r += "&amp;";
    else r += c;
  }
  return r;
}

// A cell's colour for value v on a scale of +-scale: white at 0, blue for positive, red for
// negative, full colour at |v| = scale.
static std::string shade(double v, double scale) {
  double a = scale > 0 ? std::min(1.0, std::fabs(v) / scale) : 0.0;
  auto mix = [&](int full) { return static_cast<int>(std::lround(255 - a * (255 - full))); };
  char buf[8];
  if (v >= 0) std::snprintf(buf, sizeof buf, "#%02x%02x%02x", mix(33), mix(102), mix(172));
  else std::snprintf(buf, sizeof buf, "#%02x%02x%02x", mix(178), mix(24), mix(43));
  return buf;
}

static double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

// A matrix (rows, cols) as an HTML-like table: a title row, then one row per entry of row_labels,
// its cells shaded by value; with `numbers` each cell also shows its value to 2 digits.
static std::string matrix_label(const std::string& title, const std::vector<double>& values, int64_t rows, int64_t cols,
                                const std::vector<std::string>& row_labels, bool numbers,
                                const std::vector<std::string>& col_labels = {}) {
  const double scale = max_abs(values);
  std::ostringstream s;
  s << "<<table border=\"0\" cellborder=\"1\" cellspacing=\"0\" cellpadding=\"" << (numbers ? 3 : 6) << "\">"
    << "<tr><td border=\"0\" colspan=\"" << cols + 1 << "\"><b>" << title << "</b></td></tr>";
  if (!col_labels.empty()) {
    s << "<tr><td border=\"0\"></td>";
    for (const auto& c : col_labels) s << "<td border=\"0\">" << esc(c) << "</td>";
    s << "</tr>";
  }
  for (int64_t r = 0; r < rows; ++r) {
    s << "<tr><td border=\"0\" align=\"right\">"
      << (r < static_cast<int64_t>(row_labels.size()) ? esc(row_labels[static_cast<size_t>(r)]) : "") << "</td>";
    for (int64_t c = 0; c < cols; ++c) {
      double v = values[static_cast<size_t>(r * cols + c)];
      s << "<td bgcolor=\"" << shade(v, scale) << "\">" << (numbers ? fmt(v, 2) : std::string("")) << "</td>";
    }
    s << "</tr>";
  }
  s << "</table>>";
  return s.str();
}

// The graph's opening: one font everywhere, white background.
static std::string header(const std::string& rankdir) {
  return "digraph G {\n  rankdir=" + rankdir +
         "; bgcolor=white; nodesep=0.35; ranksep=0.45;\n"
         "  node [fontname=\"DejaVu Sans\", fontsize=12, shape=box, style=rounded];\n"
         "  edge [fontname=\"DejaVu Sans\", fontsize=11];\n";
}

static std::string quoted(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    r += c;
  }
  return r + "\"";
}

std::string qkv_dot(const QKVTensors& t) {
  const int64_t T = t.x.shape()[0], C = t.x.shape()[1], dk = t.q.shape()[1];
  std::ostringstream g;
  g << header("LR");
  g << "  node [shape=plaintext, style=\"\"];\n";
  g << "  x [label=" << matrix_label("X " + shape_str(t.x.shape()), t.x.to_vector(), T, C, t.tokens, false) << "];\n";
  auto proj = [&](const char* name, const Tensor& w, const Tensor& b, const Tensor& m, const char* what) {
    g << "  " << name << " [label="
      << matrix_label(std::string(name == std::string("q")   ? "Q"
                                  : name == std::string("k") ? "K"
                                                             : "V") +
                          " " + shape_str(m.shape()) + "<br/><font point-size=\"10\">" + what + "</font>",
                      m.to_vector(), T, dk, t.tokens, false)
      << "];\n";
    g << "  w" << name << " [shape=box, style=rounded, fontsize=11, label="
      << quoted(std::string("X W_") + name + "^T" + (b.defined() ? std::string(" + b_") + name : "") + "\nW_" + name +
                " " + shape_str(w.shape()) +
                (b.defined() ? std::string(", b_") + name + " " + shape_str(b.shape()) : ""))
      << "];\n";
    g << "  x -> w" << name << " [arrowhead=none];\n  w" << name << " -> " << name << ";\n";
  };
  proj("q", t.wq, t.bq, t.q, "what each token looks for");
  proj("k", t.wk, t.bk, t.k, "what each token offers");
  proj("v", t.wv, t.bv, t.v, "what each token passes on");
  g << "  w [label="
    << matrix_label("softmax(Q K^T / sqrt(" + std::to_string(dk) + ") + causal mask) " + shape_str(t.weights.shape()) +
                        "<br/><font point-size=\"10\">row: a query; column: a key; each row sums to 1</font>",
                    t.weights.to_vector(), T, T, t.tokens, true, t.tokens)
    << "];\n";
  g << "  y [label="
    << matrix_label("output = weights V " + shape_str(t.y.shape()), t.y.to_vector(), T, dk, t.tokens, false) << "];\n";
  g << "  q -> w [label=\"rows\"];\n  k -> w [label=\"columns\"];\n  w -> y;\n  v -> y [label=\"mixed by\\nthe weights\"];\n";
  g << "  { rank=same; q; k; v; }\n";
  g << "}\n";
  return g.str();
}

std::string heads_dot(const HeadsTensors& t) {
  static const char* kColours[] = {"#a6cee3", "#b2df8a", "#fdbf6f", "#cab2d6",
                                   "#fb9a99", "#ffff99", "#8dd3c7", "#d9d9d9"};
  const int64_t H = t.heads, C = t.x.shape().back(), D = C / std::max<int64_t>(1, H);
  static const char* kEdges[] = {"#1f78b4", "#33a02c", "#ff7f00", "#6a3d9a",
                                 "#e31a1c", "#b15928", "#1b9e77", "#666666"};
  auto colour = [&](int64_t h) { return std::string(kColours[h % 8]); };
  auto edge_colour = [&](int64_t h) { return std::string(kEdges[h % 8]); };  // a darker shade of colour(h)
  std::ostringstream g;
  g << header("TB");
  g << "  node [shape=plaintext, style=\"\"];\n";
  g << "  x [label=<<b>x " << shape_str(t.x.shape()) << "</b> (B, T, C)>];\n";
  // qkv: three groups of C channels, each cut into H slices of D channels, coloured by head.
  g << "  qkv [label=<<table border=\"0\" cellborder=\"1\" cellspacing=\"0\" cellpadding=\"4\"><tr><td border=\"0\" "
       "colspan=\""
    << 3 * H << "\"><b>qkv = c_attn(x) " << shape_str(t.qkv.shape()) << "</b> (B, T, 3C)</td></tr><tr>";
  for (const char* part : {"q", "k", "v"})
    for (int64_t h = 0; h < H; ++h)
      g << "<td bgcolor=\"" << colour(h) << "\" port=\"" << part << h << "\">" << part << " " << h * D << ".."
        << h * D + D - 1 << "</td>";
  g << "</tr></table>>];\n  x -> qkv [label=\" one matmul\"];\n";
  for (int64_t h = 0; h < H; ++h) {
    g << "  head" << h << " [shape=box, style=\"rounded,filled\", fillcolor=\"" << colour(h) << "\", label=\"head " << h
      << "\\nattention(q, k, v)\\nq, k, v " << shape_str({t.q.shape()[0], 1, t.q.shape()[2], t.q.shape()[3]})
      << "\"];\n";
    for (const char* part : {"q", "k", "v"})
      g << "  qkv:" << part << h << ":s -> head" << h << ":n [color=\"" << edge_colour(h) << "\", penwidth=1.5];\n";
  }
  g << "  { rank=same;";
  for (int64_t h = 0; h < H; ++h) g << " head" << h << ";";
  g << " }\n";
  g << "  split [shape=plaintext, label=\"split_heads: q, k, v each " << shape_str(t.q.shape())
    << " (B, H, T, D)\\nhead h reads channels h*D .. h*D+D-1, D = C / H = " << D << "\"];\n";
  // The title under the cells, so that the arrows from the heads come in without crossing it.
  g << "  merged [label=<<table border=\"0\" cellborder=\"1\" cellspacing=\"0\" cellpadding=\"4\"><tr>";
  for (int64_t h = 0; h < H; ++h)
    g << "<td bgcolor=\"" << colour(h) << "\" port=\"m" << h << "\">head " << h << ": " << h * D << ".."
      << h * D + D - 1 << "</td>";
  g << "</tr><tr><td border=\"0\" colspan=\"" << H << "\"><b>merge_heads " << shape_str(t.merged.shape())
    << "</b> (B, T, C): the heads side by side</td></tr></table>>];\n";
  for (int64_t h = 0; h < H; ++h)
    g << "  head" << h << ":s -> merged:m" << h << ":n [color=\"" << edge_colour(h) << "\", penwidth=1.5, label=\" "
      << shape_str({t.y.shape()[0], 1, t.y.shape()[2], t.y.shape()[3]}) << "\"];\n";
  g << "  out [label=<<b>c_proj(merged) " << shape_str(t.out.shape())
    << "</b> (B, T, C): mixes what the heads found>];\n";
  g << "  merged -> out;\n";
  g << "  qkv -> split [style=invis];\n";
  g << "}\n";
  return g.str();
}

std::string residual_dot(const ResidualPicture& p) {
  std::ostringstream g;
  g << header("TB");
  g << "  node [shape=box, style=\"rounded,filled\", fillcolor=white];\n";
  const std::string attn = "attention\\n" + format_count(p.attn_params) + " parameters";
  const std::string mlp = "feed-forward\\n" + format_count(p.mlp_params) + " parameters";
  const std::string ln = "LayerNorm\\n" + format_count(p.ln_params) + " parameters";
  const std::string stream = "penwidth=3, color=\"#2166ac\", weight=10";  // heavy: drawn straight
  auto plus = [&](const std::string& id) {
    g << "  " << id << " [shape=circle, label=\"+\", width=0.3, fixedsize=true, fillcolor=\"#d1e5f0\"];\n";
  };
  auto lnode = [&](const std::string& id) { g << "  " << id << " [label=\"" << ln << "\", fillcolor=\"#fddbc7\"];\n"; };
  // Post-LN: x -> + (with attn(x)) -> LN -> + (with ffn) -> LN -> ...
  g << "  subgraph cluster_post {\n  label=\"Post-LN (2017 Transformer): x = LN(x + f(x))\"; fontname=\"DejaVu Sans\"; "
       "fontsize=13; color=\"#999999\";\n";
  g << "  post_in [shape=plaintext, style=\"\", label=\"stream x (B, T, " << p.channels << ")\"];\n";
  g << "  post_attn [label=\"" << attn << "\"];\n  post_mlp [label=\"" << mlp << "\"];\n";
  plus("post_p1");
  plus("post_p2");
  lnode("post_ln1");
  lnode("post_ln2");
  g << "  post_out [shape=plaintext, style=\"\", label=\"after block 0: |h| = " << fmt(p.post_first, 2)
    << "\\nafter block " << p.layers - 1 << ": |h| = " << fmt(p.post_last, 2) << "\"];\n";
  g << "  post_in -> post_p1 [" << stream << "];\n  post_in -> post_attn;\n  post_attn -> post_p1;\n";
  g << "  post_p1 -> post_ln1 [" << stream << "];\n  post_ln1 -> post_p2 [" << stream << "];\n";
  g << "  post_ln1 -> post_mlp;\n  post_mlp -> post_p2;\n  post_p2 -> post_ln2 [" << stream << "];\n";
  g << "  post_ln2 -> post_out [" << stream << ", label=\" x " << p.layers << " blocks\"];\n  }\n";
  // Pre-LN: x -> LN -> attn -> + (the stream goes straight through) ...
  g << "  subgraph cluster_pre {\n  label=\"Pre-LN (GPT-2): x = x + f(LN(x))\"; fontname=\"DejaVu Sans\"; fontsize=13; "
       "color=\"#999999\";\n";
  g << "  pre_in [shape=plaintext, style=\"\", label=\"stream x (B, T, " << p.channels << ")\"];\n";
  g << "  pre_attn [label=\"" << attn << "\"];\n  pre_mlp [label=\"" << mlp << "\"];\n";
  plus("pre_p1");
  plus("pre_p2");
  lnode("pre_ln1");
  lnode("pre_ln2");
  lnode("pre_lnf");
  g << "  pre_out [shape=plaintext, style=\"\", label=\"after block 0: |h| = " << fmt(p.pre_first, 2)
    << "\\nafter block " << p.layers - 1 << ": |h| = " << fmt(p.pre_last, 2) << "\"];\n";
  g << "  pre_in -> pre_p1 [" << stream << "];\n  pre_in -> pre_ln1;\n  pre_ln1 -> pre_attn;\n  pre_attn -> pre_p1;\n";
  g << "  pre_p1 -> pre_p2 [" << stream << "];\n  pre_p1 -> pre_ln2;\n  pre_ln2 -> pre_mlp;\n  pre_mlp -> pre_p2;\n";
  g << "  pre_p2 -> pre_out [" << stream << ", label=\" x " << p.layers << " blocks\"];\n";
  g << "  pre_out -> pre_lnf [" << stream << ", label=\" final LN\"];\n  }\n";
  g << "}\n";
  return g.str();
}

// A mask as a grid over the tokens: a dark cell where the weight is exactly 0 (masked), a light
// one where the query may look.
static std::string mask_label(const std::string& title, const std::vector<double>& w,
                              const std::vector<std::string>& rows, const std::vector<std::string>& cols) {
  std::ostringstream s;
  s << "<<table border=\"0\" cellborder=\"1\" cellspacing=\"0\" cellpadding=\"3\"><tr><td border=\"0\" colspan=\""
    << cols.size() + 1 << "\"><b>" << title << "</b></td></tr><tr><td border=\"0\"></td>";
  for (const auto& c : cols) s << "<td border=\"0\">" << esc(c) << "</td>";
  s << "</tr>";
  for (size_t r = 0; r < rows.size(); ++r) {
    s << "<tr><td border=\"0\" align=\"right\">" << esc(rows[r]) << "</td>";
    for (size_t c = 0; c < cols.size(); ++c) {
      bool masked = w[r * cols.size() + c] == 0.0;
      s << "<td bgcolor=\"" << (masked ? "#444444" : "#d1e5f0") << "\"><font color=\"" << (masked ? "white" : "black")
        << "\">" << (masked ? "masked" : "sees") << "</font></td>";
    }
    s << "</tr>";
  }
  s << "</table>>";
  return s.str();
}

std::string seq2seq_dot(const Seq2SeqPicture& p) {
  std::string src, tgt;
  for (const auto& t : p.source) src += (src.empty() ? "" : " ") + t;
  for (const auto& t : p.target) tgt += (tgt.empty() ? "" : " ") + t;
  std::ostringstream g;
  g << header("BT");
  g << "  node [shape=box, style=\"rounded,filled\", fillcolor=white];\n";
  g << "  src [shape=plaintext, style=\"\", label=" << quoted("source: " + src) << "];\n";
  g << "  tgt [shape=plaintext, style=\"\", label=" << quoted("target so far: " + tgt) << "];\n";
  g << "  enc [fillcolor=\"#d1e5f0\", label="
    << quoted("encoder block x " + std::to_string(p.encoder_layers) + "\n" + p.encoder_block) << "];\n";
  g << "  dec [fillcolor=\"#fddbc7\", label="
    << quoted("decoder block x " + std::to_string(p.decoder_layers) + "\n" + p.decoder_block) << "];\n";
  g << "  mem [shape=plaintext, style=\"\", label=" << quoted("memory " + p.memory_shape + " (B, S, C)") << "];\n";
  g << "  logits [shape=plaintext, style=\"\", label="
    << quoted("logits " + p.logits_shape + " (B, T, V): the next target token") << "];\n";
  g << "  padmask [shape=plaintext, style=\"\", label="
    << mask_label(
           "padding mask on the source keys, in cross-attention<br/>(the encoder's self-attention hides the same column)",
           p.cross_weights, p.target, p.source)
    << "];\n";
  g << "  causal [shape=plaintext, style=\"\", label="
    << mask_label("causal mask: decoder self-attention", p.self_weights, p.target, p.target) << "];\n";
  g << "  src -> enc [label=\" embed + positions\"];\n  enc -> mem;\n";
  g << "  tgt -> dec [label=\" embed + positions\"];\n  mem -> dec [label=\" keys and values of\\n cross-attention\", penwidth=2];\n";
  g << "  dec -> logits;\n";
  // The padding mask left of the encoder (it also reaches the decoder's cross-attention), the
  // causal mask right of the decoder; source on the left, target on the right.
  g << "  padmask -> enc [style=dashed, arrowhead=none, constraint=false];\n";
  g << "  padmask -> dec [style=dashed, arrowhead=none, constraint=false];\n";
  g << "  dec -> causal [style=dashed, arrowhead=none];\n";
  g << "  { rank=same; src; tgt; }\n  src -> tgt [style=invis];\n";
  g << "  { rank=same; padmask; enc; }\n  padmask -> enc [style=invis];\n";
  g << "  { rank=same; dec; causal; }\n";
  g << "}\n";
  return g.str();
}

std::string gpt_stack_dot(const std::vector<std::pair<std::string, GPTConfig>>& configs) {
  std::ostringstream g;
  g << header("BT");
  g << "  node [shape=box, style=\"rounded,filled\", fillcolor=white, width=3.6];\n";
  for (size_t i = 0; i < configs.size(); ++i) {
    const GPTConfig& c = configs[i].second;
    GPT model(c);
    // Parameters by part: the first two components of a name ("transformer.h", "lm_head"); a
    // tied LM head is listed once, under wte, as named_parameters() does.
    std::map<std::string, int64_t> part;
    for (const auto& [name, t] : model.named_parameters()) {
      std::string key = name.substr(0, name.find('.', name.find('.') + 1));
      if (key.rfind("transformer.h", 0) == 0) key = "transformer.h";
      part[key] += shape_numel(t.shape());
    }
    const int64_t per_block = part["transformer.h"] / c.n_layer;
    const std::string id = "m" + std::to_string(i), C = std::to_string(c.n_embd);
    g << "  subgraph cluster_" << id
      << " {\n  label=" << quoted(configs[i].first + ": " + format_count(model.num_parameters()) + " parameters")
      << "; fontname=\"DejaVu Sans\"; fontsize=13; color=\"#999999\";\n";
    g << "  " << id << "_in [shape=plaintext, style=\"\", width=0, label="
      << quoted("token ids (B, T), T <= " + std::to_string(c.block_size)) << "];\n";
    g << "  " << id << "_wte [fillcolor=\"#d1e5f0\", label="
      << quoted("token embedding wte (" + std::to_string(c.vocab_size) + ", " + C + ")\n" +
                format_count(part["transformer.wte"]) + " parameters")
      << "];\n";
    std::string pos = c.pos_encoding == PosEncoding::learned
                          ? "position embedding wpe (" + std::to_string(c.block_size) + ", " + C + ")\n" +
                                format_count(part["transformer.wpe"]) + " parameters"
                          : std::string("positions: no parameters");
    g << "  " << id << "_wpe [fillcolor=\"#d1e5f0\", label=" << quoted(pos) << "];\n";
    g << "  " << id << "_blocks [fillcolor=\"#fddbc7\", label="
      << quoted("block x " + std::to_string(c.n_layer) + ": LN, attention (" + std::to_string(c.n_head) + " heads of " +
                std::to_string(c.n_embd / c.n_head) + "), LN, MLP (" + C + " -> " +
                std::to_string(c.d_ff ? c.d_ff : 4 * c.n_embd) + " -> " + C + ")\n" + format_count(per_block) +
                " parameters each, " + format_count(part["transformer.h"]) + " in all")
      << "];\n";
    g << "  " << id
      << "_lnf [label=" << quoted("final LayerNorm ln_f\n" + format_count(part["transformer.ln_f"]) + " parameters")
      << "];\n";
    g << "  " << id << "_head [fillcolor=\"#e0e0e0\", label="
      << quoted("LM head (" + std::to_string(c.vocab_size) + ", " + C + ")\n" +
                (c.tied_head ? std::string("tied: it is wte, no parameters of its own")
                             : format_count(part["lm_head"]) + " parameters"))
      << "];\n";
    g << "  " << id << "_out [shape=plaintext, style=\"\", width=0, label="
      << quoted("logits (B, T, " + std::to_string(c.vocab_size) + ")") << "];\n";
    g << "  " << id << "_in -> " << id << "_wte;\n  " << id << "_wte -> " << id << "_wpe [label=\" + \"];\n  " << id
      << "_wpe -> " << id << "_blocks [label=\" (B, T, " << C << ")\"];\n  " << id << "_blocks -> " << id << "_lnf;\n  "
      << id << "_lnf -> " << id << "_head;\n  " << id << "_head -> " << id << "_out;\n  }\n";
  }
  g << "}\n";
  return g.str();
}

void draw_gpt_stack(std::ostream& out, const std::string& file, int64_t vocab_size) {
  draw_graphviz(out, file, [&] {
    GPTConfig ours = gpt_config_of(load_config(std::string(SF_SOURCE_DIR) + "/configs/default.json"), vocab_size);
    GPTConfig gpt2;           // GPTConfig's defaults are GPT-2 small's shape ...
    gpt2.vocab_size = 50257;  // ... with GPT-2's own vocabulary (the default pads it to 50304)
    return gpt_stack_dot({{"configs/default.json", ours}, {"GPT-2 small", gpt2}});
  });
}

}  // namespace sf::lessons

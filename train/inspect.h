// inspect.h: looking inside a trained GPT: every layer's and head's attention over a prompt, as
// numbers, heat maps (PNG, one per layer, heads side by side) and one self-contained HTML page,
// and a table of what each head does (its "role"), measured.
//
//   scratchformer inspect RUN --prompt "ROMEO: " [--out DIR]
//
// Head roles, each averaged over the query positions where it is defined:
//   prev     attention on the previous token (t - 1)           positions t >= 1
//   first    attention on the first token                      positions t >= 1
//   same     attention on earlier copies of the current token  positions with such a copy
//   entropy  -sum w log w of the row, in nats (0: one token; log(t + 1): uniform)
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nn/gpt.h"

namespace sf {

// weights[layer][head][query][key]: the attention of one forward over `ids` (self-attention,
// causal: key <= query), or of a decoder over an encoder's tokens (cross-attention: key_labels).
struct AttentionMaps {
  std::vector<int32_t> ids;
  std::vector<std::string> labels;      // each query token as text, made visible ("\n" -> "\\n", " " -> "␣")
  std::vector<std::string> key_labels;  // cross-attention: the source tokens; empty: the same as labels
  std::vector<std::vector<std::vector<std::vector<double>>>> weights;
  int64_t layers() const { return static_cast<int64_t>(weights.size()); }
  int64_t heads() const { return weights.empty() ? 0 : static_cast<int64_t>(weights[0].size()); }
  int64_t length() const { return static_cast<int64_t>(labels.size()); }
  const std::vector<std::string>& keys() const { return key_labels.empty() ? labels : key_labels; }
  int64_t key_length() const { return static_cast<int64_t>(keys().size()); }
};

// A token's text made visible for a label: "\n" -> "\\n", " " -> "␣"; bytes that are only part
// of a character (byte-level BPE) as "<e6 88>".
std::string token_label(const std::string& bytes);

// Runs `model` once over ids (at most block_size of them) with attention kept.
AttentionMaps attention_maps(GPT& model, const std::vector<int32_t>& ids, const std::vector<std::string>& labels);

struct HeadRole {
  int64_t layer = 0, head = 0;
  double prev = 0, first = 0, same = 0, entropy = 0;
  bool has_same = false;  // false when no token of the input repeats an earlier one
};
std::vector<HeadRole> head_roles(const AttentionMaps& m);

// The printed forms: one matrix per layer and head (rows: queries), and the role table.
std::string format_attention(const AttentionMaps& m, int64_t layer, int64_t head);
std::string format_head_roles(const std::vector<HeadRole>& roles);

// Where draw_attention_png draws: the picture's size in pixels, and in fractions of it (gnuplot's
// screen coordinates, 0 at the bottom left) one box per head, left to right, all of one size with
// square cells, and the colour scale right of the last box. The colour scale has a strip of its
// own, so the last head's map is as large as the others.
struct ScreenBox {
  double left = 0, right = 0, bottom = 0, top = 0;
};
struct AttentionLayout {
  int width = 0, height = 0;     // pixels
  std::vector<ScreenBox> heads;  // one per head
  ScreenBox colorbox;
};
AttentionLayout attention_layout(int64_t heads, int64_t queries, int64_t keys);

// Heat map of one layer, heads side by side, tokens on both axes; "" or a note why there is none.
std::string draw_attention_png(const AttentionMaps& m, int64_t layer, const std::string& png_path,
                               const std::string& title);

// The maps as JSON {"labels": [...], "key_labels": [...], "cross": bool, "roles": [{"layer", "head",
// "prev", "first", "same" (null when no token repeats), "entropy"}], "weights": [layer][head][q][k]}
// (weights to 6 decimals, roles to 4; cross-attention's roles hold the entropy only). A measure
// added to HeadRole belongs in "roles" too: the page shows a column for every measure it finds
// there (it already knows "induction").
std::string attention_json(const AttentionMaps& m);
class Task;

// An encoder-decoder's cross-attention (seq2seq_task.cpp), measured on held-out examples with
// teacher forcing: for "reverse" the source position an output token mirrors (s - 1 - t), for
// "copy" the same position; per decoder layer, the mean attention (over heads and positions) on
// it. A model that learned the task looks there: an anti-diagonal (reverse) or a diagonal (copy).
struct CrossAttentionReport {
  std::string alignment;              // "mirrored", "same position", or "" (sort, addition: none fixed)
  std::vector<double> aligned_share;  // per decoder layer
  int64_t examples = 0, positions = 0;
  AttentionMaps first;  // the first example: <bos> + target against the source
};
CrossAttentionReport cross_attention_report(Task& task, int64_t max_examples);
// The page (the attention explorer): the heads of a layer as heat maps with the tokens on both
// axes, the role table beside them, a "lines" view and how to read them, in English and Chinese
// (<html lang> picks). No network, no external script or font; the data is inside it.
std::string attention_html(const AttentionMaps& m, const std::string& title);

}  // namespace sf

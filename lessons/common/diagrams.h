// diagrams.h: pictures of the ideas (not of measured curves), written as Graphviz DOT from the
// real tensors, modules and configs of a lesson, and drawn by pictures.h's draw_graphviz. Every
// shape and count in a picture is read from the objects passed in, so a picture cannot drift from
// the code it shows. Labels stay horizontal (CJK tokens are never rotated) and Graphviz places
// them without overlap.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "autograd/tensor.h"
#include "nn/gpt.h"

namespace sf::lessons {

// Self-attention on one sentence as matrices: X (T, C) times three projections gives Q, K, V
// (T, d_k); Q K^T / sqrt(d_k) with the causal mask, softmax, and the weights times V. Every
// matrix is drawn cell by cell (shaded by value, rows labelled by token) with its real shape.
struct QKVTensors {
  std::vector<std::string> tokens;  // T labels
  Tensor x, wq, wk, wv;             // (T, C); the projections' weights (d_k, C)
  Tensor bq, bk, bv;                // their biases (d_k), or undefined
  Tensor q, k, v;                   // (T, d_k)
  Tensor weights;                   // (T, T), after the causal mask and softmax
  Tensor y;                         // (T, d_k)
};
std::string qkv_dot(const QKVTensors& t);

// Multi-head attention's split and merge: x -> c_attn -> qkv (B, T, 3C), cut into H heads of
// D channels (the slice of each head coloured), H attentions, the heads side by side again,
// c_proj. The shapes are the tensors' own.
struct HeadsTensors {
  Tensor x, qkv, q, k, v, y, merged, out;  // as named in lesson multihead
  int64_t heads = 0;
};
std::string heads_dot(const HeadsTensors& t);

// Where LayerNorm sits on the residual stream: Post-LN (LN after each sum) beside Pre-LN (LN
// before each sublayer, the stream itself untouched, one final LN). The first block of each is
// drawn, with the stream's measured norm |h| entering it and after the last of `layers` blocks.
struct ResidualPicture {
  int64_t layers = 0, channels = 0;
  int64_t attn_params = 0, mlp_params = 0, ln_params = 0;             // one block's sublayers
  double pre_first = 0, pre_last = 0, post_first = 0, post_last = 0;  // |h| after block 0 and after the last
};
std::string residual_dot(const ResidualPicture& p);

// The encoder-decoder's wiring with its two masks, drawn as grids of the tokens: the causal mask
// of the decoder's self-attention (T, T) and the source padding mask (a key of <pad> hidden) that
// the encoder's self-attention and the decoder's cross-attention share. A cell is "masked" where
// the lesson's run gave it attention weight 0.
struct Seq2SeqPicture {
  std::vector<std::string> source, target;  // S and T labels (the source may end in <pad>)
  std::vector<double> self_weights;         // (T, T), the decoder's self-attention, one head
  std::vector<double> cross_weights;        // (T, S), the decoder's cross-attention, one head
  std::string memory_shape, logits_shape;   // shape_str of the memory and of the logits
  int64_t encoder_layers = 0, decoder_layers = 0;
  std::string encoder_block, decoder_block;  // one line each: the sublayers in order
};
std::string seq2seq_dot(const Seq2SeqPicture& p);

// The GPT stack, bottom to top (token and position embeddings, n_layer blocks, final LayerNorm,
// LM head), with each part's parameter count taken from a real GPT built from each config, side
// by side for every (name, config) given.
std::string gpt_stack_dot(const std::vector<std::pair<std::string, GPTConfig>>& configs);
// gpt_stack_dot for configs/default.json (with `vocab_size` characters) beside GPT-2 small (the
// GPTConfig defaults, 50257 tokens), drawn to images/FILE. Builds both models only when drawing.
void draw_gpt_stack(std::ostream& out, const std::string& file, int64_t vocab_size);

}  // namespace sf::lessons

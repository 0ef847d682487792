// exercise.h: the functions a learner writes, one exercise file each (exercises/NN_name.cpp).
//
// Every exercise file includes this header, so a signature that drifts from what the checker
// calls is a compile error, not a mystery. The checker (exercises/check/) calls these functions
// and compares them with the framework's own ops; the reference solutions in
// exercises/solutions/ define the same functions (spoilers).
//
// A stub's body is `todo("...")`, which throws NotImplemented: the checker reports
// "not implemented yet" for it instead of a failure.
//
// Legend: B batch, T time (queries), S keys, C channels, H heads, D head size, V vocab, N rows.
#pragma once
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/int_tensor.h"
#include "autograd/tensor.h"
#include "nn/attention.h"  // KVCache
#include "nn/gpt.h"        // GPT, GPTCache (the assembly exercises read its weights)

namespace sf::exercise {

// Thrown by an exercise that has not been written yet.
struct NotImplemented : std::logic_error {
  using std::logic_error::logic_error;
};
// The body of every stub: throws NotImplemented naming the function.
[[noreturn]] inline void todo(const char* function) { throw NotImplemented(function); }

// ---- lesson 2 autograd ----
// 01: dx of y = tanh(x), from the saved output y and the incoming gradient dy.
Tensor tanh_backward(const Tensor& y, const Tensor& dy);

// ---- lesson 3 broadcasting ----
// 02: sums a broadcast gradient g back down to `shape` (what sf::sum_to does).
Tensor sum_to_shape(const Tensor& g, const Shape& shape);

// ---- lesson 4 embeddings ----
// 03: dW (V, C) of out = W[ids], from dout (ids.shape..., C): a scatter-add.
Tensor embedding_backward(const IntTensor& ids, const Tensor& dout, int64_t V);

// ---- lesson 8 positions ----
// 04: the sinusoidal table PE (T, C) for positions offset .. offset+T-1.
Tensor sinusoidal_positions(int64_t T, int64_t C, int64_t offset);

// ---- lesson 5 attention ----
// 05: softmax over the last axis, stable for large logits and -inf entries; a fully masked row
// (every entry -inf) gives zeros.
Tensor softmax_forward(const Tensor& x);
// 06: dx of y = softmax(x) over the last axis, from y and dy.
Tensor softmax_backward(const Tensor& y, const Tensor& dy);
// 07: mean cross-entropy of logits (N, V) against targets (N), through a stable log-softmax;
// and its gradient d loss / d logits, scaled by dloss (a scalar tensor).
Tensor cross_entropy_forward(const Tensor& logits, const IntTensor& targets);
Tensor cross_entropy_backward(const Tensor& logits, const IntTensor& targets, const Tensor& dloss);
// 08: causal scaled dot-product attention: q (B, H, T, D), k and v (B, H, S, D) -> (B, H, T, D);
// query t sits at absolute position S - T + t and sees keys s <= S - T + t.
Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v);
// 09: the online softmax: the running (max, sum of exponentials) of a stream of scores.
struct SoftmaxState {
  double max = -std::numeric_limits<double>::infinity();  // the largest score so far (-inf before any)
  double sum = 0.0;                                       // sum of exp(score - max) over the scores seen so far
};
// Folds one more score into the state.
void online_softmax_update(SoftmaxState& state, double score);
// The state of two blocks of scores, from each block's state.
SoftmaxState online_softmax_merge(const SoftmaxState& a, const SoftmaxState& b);

// ---- lesson 7 multihead ----
// 10: (B, T, C) -> (B, H, T, D) with D = C / H, and back.
Tensor split_heads(const Tensor& x, int64_t H);
Tensor merge_heads(const Tensor& x);

// ---- lesson 9 layernorm ----
// 11: (x - mean) / sqrt(var + eps) * w + b over the last axis; var is biased (/C).
Tensor layer_norm_forward(const Tensor& x, const Tensor& w, const Tensor& b, double eps);
// 12: the gradients of layer_norm_forward with respect to x, w and b.
struct LayerNormGrads {
  Tensor dx, dw, db;  // (..., C), (C), (C)
};
LayerNormGrads layer_norm_backward(const Tensor& x, const Tensor& w, const Tensor& dy, double eps);

// ---- lesson 10 feedforward ----
// 13: GELU, tanh approximation, and its derivative applied to dy.
Tensor gelu_forward(const Tensor& x);
Tensor gelu_backward(const Tensor& x, const Tensor& dy);

// ---- lesson 12 decoder ----
// 14: appends the new keys and values (B, H, T_new, D) to the cache (B, H, S, D).
void kv_cache_append(KVCache& cache, const Tensor& k, const Tensor& v);

// ---- lesson 13 training ----
// 15: warmup then cosine decay, the rate of update `step` (0 = first).
struct CosineSchedule {
  double lr = 1e-3;          // peak rate
  double min_lr = 1e-4;      // floor, reached at decay_steps
  int64_t warmup_steps = 0;  // W
  int64_t decay_steps = 0;   // S > W
};
double warmup_cosine_lr(const CosineSchedule& schedule, int64_t step);
// 16: scales every gradient so that their global L2 norm is at most max_norm; returns the
// norm before clipping.
double clip_grad_norm(std::vector<std::vector<double>>& grads, double max_norm);
// 17: one AdamW update of p (in place) with gradient g and moments m, v; t = 1 on the first.
struct AdamWConfig {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0;
};
void adamw_step(std::vector<double>& p, const std::vector<double>& g, std::vector<double>& m, std::vector<double>& v,
                int64_t t, const AdamWConfig& config);

// ---- lesson 16 mixed-precision ----
// 18: dynamic loss scaling: unscale the gradients, decide whether to step, adjust the scale.
struct LossScaler {
  double scale = 65536.0;  // S
  int64_t good_steps = 0;  // finite steps since the scale last changed
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
};
// Returns whether the optimizer may step (every unscaled gradient is finite).
bool loss_scaler_update(LossScaler& scaler, std::vector<std::vector<double>>& grads);

// ---- 19-23, lesson 14 build-gpt: build a GPT from your pieces (the assembly exercises) ----
//
// Given: the form of GPT the assembly exercises assume (learned positions, Pre-LN, GELU with tanh,
// biases, a head tied to the token embedding, no dropout). The checks and the capstone build their
// models from it.
inline GPTConfig assembly_gpt_config(int64_t vocab_size, int64_t block_size, int64_t n_layer, int64_t n_head,
                                     int64_t n_embd) {
  GPTConfig c;
  c.vocab_size = vocab_size;
  c.block_size = block_size;
  c.n_layer = n_layer;
  c.n_head = n_head;
  c.n_embd = n_embd;
  c.dropout = 0.0;
  c.bias = true;
  c.tied_head = true;
  c.pos_encoding = PosEncoding::learned;
  c.norm = NormPlacement::pre;
  c.activation = Activation::gelu_tanh;
  return c;
}
//
// Given, not exercises (exercises/your_ops.cpp): your forward and backward functions as autograd
// ops. Each runs your forward without recording a graph and records one op whose backward is
// yours, exactly as the checker's gradient checks wrap them. Exercises 19-23 build the model from
// these, so the capstone trains with your softmax, cross-entropy, LayerNorm, GELU and embedding.
Tensor your_softmax(const Tensor& x);                                                   // 05 + 06, last axis
Tensor your_cross_entropy(const Tensor& logits, const IntTensor& targets);              // 07: (N, V), (N)
Tensor your_layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps);  // 11 + 12
Tensor your_gelu(const Tensor& x);                                                      // 13
Tensor your_embedding(const Tensor& W, const IntTensor& ids);  // W[ids] (ids.shape..., C); 03 backward
// A tensor's values as doubles, and back into the tensor in its own dtype (for 22's optimizer).
std::vector<double> values_of(const Tensor& t);
void set_values(Tensor& t, const std::vector<double>& values);

// 19: causal self-attention (B, T, C) -> (B, T, C) with the weights of `attn` (c_attn, c_proj).
// With a cache, x holds only the new tokens; their keys and values are appended to it first.
Tensor causal_self_attention(const MultiHeadAttention& attn, const Tensor& x, KVCache* cache);
// 20: a Pre-LN block: x + attn(ln_1(x)), then x + mlp(ln_2(x)). (B, T, C) -> (B, T, C).
Tensor transformer_block(const SelfAttentionBlock& block, const Tensor& x, KVCache* cache);
// 21: the GPT forward: logits (B, T, V) of idx (B, T), and the mean cross-entropy against targets
// (B, T) when targets is not null (else loss stays undefined). With a cache, idx holds only the
// tokens after the cached ones.
struct GPTOutput {
  Tensor logits;  // (B, T, V)
  Tensor loss;    // scalar, or undefined without targets
};
GPTOutput gpt_forward(const GPT& model, const IntTensor& idx, const IntTensor* targets, GPTCache* cache);
// 22: one training step on the batch (x, y), each (B, T).
struct TrainStepConfig {
  CosineSchedule schedule;  // 15: the rate of each step (schedule.lr is the peak)
  AdamWConfig adamw;        // 17: its lr is ignored (the schedule's is used); weight_decay only
                            // for parameters with dim() >= 2 (matrices and embeddings)
  double max_norm = 1.0;    // 16: the global gradient norm is clipped to this
};
struct TrainState {
  int64_t step = 0;                       // updates done so far (0 before the first)
  std::vector<std::vector<double>> m, v;  // AdamW moments, one per model.parameters() entry
};
struct StepResult {
  double loss = 0;       // the batch's loss before the update
  double grad_norm = 0;  // the global gradient norm before clipping
  double lr = 0;         // the rate this step used
};
StepResult train_step(GPT& model, const IntTensor& x, const IntTensor& y, TrainState& state,
                      const TrainStepConfig& config);
// 23: sampling. The token drawn from one row of logits (V): softmax(logits / temperature) cut to
// the top_k most likely (0 = all), then to the smallest prefix whose probability reaches top_p.
struct SamplingConfig {
  double temperature = 1.0;  // 0: the most likely token, no draw
  int64_t top_k = 0;
  double top_p = 1.0;
};
int64_t sample_token(const std::vector<double>& logits, const SamplingConfig& s, Generator& gen);
// The prompt followed by max_new_tokens sampled tokens, one forward per new token through `cache`.
std::vector<int32_t> generate(const GPT& model, const std::vector<int32_t>& prompt, int64_t max_new_tokens,
                              const SamplingConfig& s, Generator& gen, GPTCache& cache);

// ---- lesson 5 attention, backward by hand ----
// 24: the gradients of causal attention out = softmax(mask(q k^T / sqrt(D))) v (exercise 8's
// forward, the same mask) with respect to q, k and v, from dout (B, H, T, D).
struct AttentionGrads {
  Tensor dq, dk, dv;  // (B, H, T, D), (B, H, S, D), (B, H, S, D)
};
AttentionGrads attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& dout);

// ---- lesson 20 attention-cost ----
// 25: the forward work and memory of one layer for one sequence of T tokens at width C with H
// heads: multiply-adds of causal attention (Q K^T and P V, query t sees t + 1 keys) and of the
// linear layers (q, k, v, the output projection and the 4x MLP), and the bytes of the
// probabilities P (H, T, T) kept for backward.
struct AttentionCost {
  int64_t attention_macs = 0, linear_macs = 0, p_bytes = 0;
};
AttentionCost attention_cost(int64_t T, int64_t C, int64_t H, int64_t bytes_per_number);

// ---- lesson 6 scaling ----
// 26: the entropy (natural log) of each row of probabilities p (..., N) -> (...), 0 log 0 = 0.
Tensor softmax_entropy(const Tensor& p);

// ---- lesson 21 online-softmax ----
// 27: a query row's attention over one tile of keys, not yet normalised: the tile's max score,
// sum of e^(score - max), and out = sum over the tile of e^(score - max) v (D values).
struct PartialRow {
  double max = -std::numeric_limits<double>::infinity();
  double sum = 0.0;
  std::vector<double> out;  // D values; empty for a row that has seen no key yet
};
// The partial row of two tiles together; the row's attention output is then out / sum.
PartialRow merge_partial_rows(const PartialRow& a, const PartialRow& b);

// ---- lesson 22 windows ----
// 28: the (T, S) mask of causal attention with a window of W keys: 1 where query t (at position
// S - T + t) may not see key s, 0 where it may. Float64.
Tensor sliding_window_mask(int64_t T, int64_t S, int64_t W);

// ---- lesson 23 kv-cache ----
// 29: the bytes the KV cache holds per token: keys and values of every layer, for n_kv_head
// key/value heads of head size D (MHA: n_kv_head = n_head; GQA: fewer; MQA: 1).
int64_t kv_cache_bytes_per_token(int64_t n_layer, int64_t n_head, int64_t n_kv_head, int64_t D,
                                 int64_t bytes_per_number);

// ---- lesson 24 extrapolation ----
// 30: RoPE's rotation of x (B, H, T, D) at positions offset .. offset + T - 1 (the rotate-half
// pairing (i, i + D/2), base 10000), keeping x's dtype; and ALiBi's score bias (1, H, T, S),
// float64, for the given slopes (one per head), query t at position S - T + t.
Tensor rope_rotate(const Tensor& x, int64_t offset);
Tensor alibi_score_bias(const std::vector<double>& slopes, int64_t T, int64_t S);

// ---- lesson 17 scaling-out ----
// 31: gradient accumulation: from each micro-batch's gradient of its own mean loss (over rows[k]
// rows), the gradient of the mean loss over all the rows, as one big batch would give it.
std::vector<double> accumulate_gradients(const std::vector<std::vector<double>>& micro_grads,
                                         const std::vector<int64_t>& rows);

}  // namespace sf::exercise

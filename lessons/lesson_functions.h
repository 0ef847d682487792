// lesson_functions.h: one function per lesson. Each prints the lesson to `out` and returns the key
// numbers it printed, so the tests can assert them. The text of lesson N is lessons/NAME.md.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "experiments/inspect.h"
#include "lessons/cost_common.h"

namespace sf::lessons {

// 1. Autograd by hand: L = a * tanh(a*b + c) at a = 2, b = -1, c = 0.5.
struct AutogradResult {
  double loss;
  std::vector<double> by_hand;    // dL/da, dL/db, dL/dc by the chain rule
  std::vector<double> by_engine;  // the same from L.backward()
  std::vector<double> by_finite_difference;
  std::string dot;  // the graph in Graphviz DOT
};
AutogradResult run_lesson_autograd(std::ostream& out);

// 2. Broadcasting and gradcheck.
struct BroadcastingResult {
  std::vector<int64_t> broadcast_shape;                 // of (2, 3) + (3)
  std::vector<double> bias_grad;                        // the reduced gradient of the (3) bias
  std::vector<int64_t> col_grad_shape, row_grad_shape;  // (4, 1) * (3): each reduced to its input
  std::string unreduced_error;                          // what the engine says when a backward forgets to reduce
  bool gradcheck_correct_ok;                            // gradcheck of the correct bias_add passes
  bool gradcheck_buggy_ok;                              // ... and of the one whose backward drops rows fails
  int64_t gradcheck_entries;                            // Jacobian entries compared
  double buggy_analytic, buggy_numeric;                 // the failing entry gradcheck names
};
BroadcastingResult run_lesson_broadcasting(std::ostream& out);

// 3. Token embeddings.
struct EmbeddingsResult {
  double lookup_vs_onehot;              // max |embedding(W, ids) - onehot(ids) @ W|
  double grad_lookup_vs_onehot;         // same for dW
  std::vector<double> grad_row_wo;      // dW row of 我 (used twice) = sum of its two upstream rows
  std::vector<double> grad_row_unused;  // dW row of a token not in the sentence (zeros)
  int64_t lookup_reads, onehot_mults;   // for GPT-2 sizes: T*C numbers read vs T*V*C multiplies
};
EmbeddingsResult run_lesson_embeddings(std::ostream& out);

// 4. Positional encoding.
struct PositionsResult {
  std::vector<double> pe_row1;       // the sinusoidal table's row for position 1
  double shift_error;                // max |M_3 PE(p) - PE(p + 3)|
  std::string learned_error;         // looking up a position past the table
  std::vector<double> rope_scores;   // q.k for (2,0), (5,3), (12,10), (3,0), (10,7)
  double rope_norm_ratio;            // |rope(q)| / |q|
  std::vector<double> alibi_slopes;  // 4 heads
  std::vector<double> alibi_head0;   // (5, 5) bias of head 0
  double order_blind_diff;           // same token, two orders, no positions: 0
  double order_aware_diff;           // ... with sinusoidal positions: > 0
};
PositionsResult run_lesson_positions(std::ostream& out);

// 5. Attention by hand (the worked example).
struct AttentionResult {
  std::vector<double> scores;                  // 0.36, 0.81, 1.01
  std::vector<double> scaled;                  // 0.18, 0.405, 0.505
  std::vector<double> weights;                 // about 0.275, 0.344, 0.381
  std::vector<double> output;                  // about 0.334, 0.483, 0.577, 0.321
  std::vector<double> output_rounded_weights;  // 0.3338, 0.4826, 0.5768, 0.3206
  std::vector<double> causal_weights;          // (3, 3) after the causal mask
  std::vector<double> padding_weights;         // (4, 4) with the last key padded
  std::vector<double> fused_output;            // sf::attention's output for the same q, k, v (3, 4)
  std::vector<double> hand_output;             // softmax(QK^T/2 + mask) V written with ops (3, 4)
  std::vector<double> all_masked_row;          // softmax of a row that is entirely -inf
};
AttentionResult run_lesson_attention(std::ostream& out);

// 6. Multi-head attention.
struct MultiHeadResult {
  std::vector<std::vector<int64_t>> shapes;  // x, qkv, q, k, v, y, merged, out
  double steps_vs_module;                    // max |steps - attn.forward(x)|
  std::vector<double> weights;               // (1, H, T, T) attention weights
  int64_t params_no_bias, params_bias;       // d_model 768, 12 heads
};
MultiHeadResult run_lesson_multihead(std::ostream& out);

// 7. LayerNorm.
struct LayerNormResult {
  std::vector<double> means, stds;          // per token, before
  std::vector<double> out_means, out_stds;  // per token, after (0 and about 1)
  double scale_invariance;                  // max |LN(10 x) - LN(x)|
  double fused_vs_composed;                 // max |dx fused - dx composed from primitives|
  double grad_row_sum;                      // max |sum_c dx[t, c]|: the gradient has no mean component
  double grad_dot_xhat;                     // max |sum_c dx[t, c] * xhat[t, c]|
};
LayerNormResult run_lesson_layernorm(std::ostream& out);

// 8. Feed-forward, GELU versus ReLU.
struct FeedForwardResult {
  std::vector<double> xs, relu, gelu, gelu_tanh, drelu, dgelu;  // the table
  double tanh_approx_max_error;                                 // max |gelu - gelu_tanh| on [-6, 6]
  double dead_relu_fraction;                                    // hidden units with zero ReLU gradient on the batch
  double zero_gelu_grad_fraction;                               // hidden units with zero GELU gradient (none)
  int64_t params_768;                                           // FFN parameters for C = 768, hidden 3072, with biases
  std::vector<int64_t> shapes;  // x, hidden, out shapes flattened: (T, C), (T, 4C), (T, C)
};
FeedForwardResult run_lesson_feedforward(std::ostream& out);

// 9. Encoder block.
struct EncoderResult {
  double by_hand_vs_block;    // max |residual steps by hand - block.forward|
  std::vector<double> norms;  // mean token norms: x, attn, x+attn, ffn, out
  double grad_upstream, grad_with_residual, grad_sublayers_only, grad_without_residual;
  std::vector<double> stack_norms;  // 6 blocks: after attention, after FFN, ...
};
EncoderResult run_lesson_encoder(std::ostream& out);

// 10. Decoder block and KV cache.
struct DecoderResult {
  std::vector<double> self_weights;   // (4, 4) causal self-attention, layer 0 head 0
  std::vector<double> cross_weights;  // (4, 3) cross-attention, layer 0 head 0
  double cache_vs_full;               // max |cached logits - recomputed logits|
  int64_t tiny_without, tiny_with;    // multiply-adds for 4 tokens of this model
  int64_t base_without, base_with;    // ... and 50 tokens of the base Transformer
};
DecoderResult run_lesson_decoder(std::ostream& out);

// 11. Pre-LN versus Post-LN.
struct PreNormResult {
  double loss_pre, loss_post;                             // the written-out forward
  double loss_pre_model, loss_post_model;                 // GPT::loss on the same batch
  std::vector<double> pre_hidden, post_hidden;            // mean token norm after each block
  std::vector<double> pre_hidden_grad, post_hidden_grad;  // |dL/dh| after each block
  std::vector<double> pre_param_grad, post_param_grad;    // |dL/dW| over each block's parameters
};
PreNormResult run_lesson_prenorm(std::ostream& out);

// 12. The training loop.
struct TrainingResult {
  std::vector<double> cosine;                          // lr_at(cosine) at steps 0 1 4 9 10 25 50 75 99 100 150
  std::vector<double> noam;                            // lr_at(noam) at steps 0 1000 2000 3999 8000 16000 64000
  std::vector<double> losses, norms;                   // 40 training steps: loss and pre-clip gradient norm
  double spike_norm, clipped_norm;                     // the surprising batch: before and after clipping
  std::vector<double> adamw_by_hand, adamw_optimizer;  // one step, 4 weights
};
TrainingResult run_lesson_training(std::ostream& out);

// 13. Mixed precision.
struct MixedPrecisionResult {
  std::vector<double> fp16, bf16;            // largest, smallest subnormal, spacing at 1
  double fp16_digits = 0, bf16_digits = 0;   // significant decimal digits: 11 and 8 bits * log10(2)
  double fp16_65520, fp16_1e8;               // rounding examples: inf, 0
  double grad_fp32, grad_fp16, grad_scaled;  // dL/dW[0,0]: float32, fp16, fp16 with scaling
  double zero_fraction_fp16, zero_fraction_scaled;
  std::vector<double> scales;   // S at each of the 3 overflow iterations
  std::vector<bool> stepped;    // whether each stepped
  std::vector<double> weights;  // W2[0, 0] after each
  int64_t steps_taken;
  double final_w;
};
MixedPrecisionResult run_lesson_mixed_precision(std::ostream& out);

// 14. Let's build a GPT, stage by stage: seven models on real text, the same step budget each,
// every one trained from each seed; then one block against N blocks on a larger budget.
struct BuildGptOptions {
  std::string corpus = "shakespeare";  // or "tang" (SF_LESSON_CORPUS=tang when run by name)
  int64_t steps = 1500;                // per stage
  int64_t batch_size = 16, block_size = 32;
  int64_t n_embd = 64, n_head = 4, n_layer = 4;
  double lr = 6e-3;
  int64_t depth_factor = 4;                    // the depth runs train depth_factor x steps (0: none)
  std::vector<uint64_t> seeds = {1337, 1338};  // each: initial weights and batches; samples: the first
  int64_t sample_chars = 200;
  int64_t val_batches = 0;  // batches of 64 val windows scored; 0: the whole val split
};
struct BuildGptResult {
  std::string corpus;  // its one-line description
  int64_t vocab_size = 0, train_chars = 0, val_chars = 0;
  std::vector<int64_t> params;            // per stage, counted by the modules
  std::vector<int64_t> formula;           // per stage, by the formula printed beside it
  std::vector<std::string> formula_text;  // the formula with the sizes put in
  std::vector<double> val_loss;           // per stage, over the whole val split, mean over the seeds
  std::vector<std::vector<double>> val_loss_per_seed;  // [stage][seed]
  std::vector<std::vector<double>> curves;             // [stage]: train loss per bin of steps, mean over seeds
  std::vector<std::string> samples;                    // per stage, the first seed's model
  int64_t gpt_params = 0;                              // sf::GPT with the last stage's sizes
  // The depth runs: one block (stage layernorm) and N blocks, depth_factor x steps each.
  std::vector<int64_t> depth_layers, depth_params;
  std::vector<double> depth_val_loss;                        // mean over the seeds
  std::vector<std::vector<double>> depth_val_loss_per_seed;  // [model][seed]
  std::vector<std::vector<double>> depth_curves;             // [model]
  std::string depth_sample;                                  // the N-block model, first seed
};
BuildGptResult run_lesson_build_gpt(std::ostream& out, const BuildGptOptions& options);
BuildGptResult run_lesson_build_gpt(std::ostream& out);  // the defaults (and SF_LESSON_CORPUS)

// What lessons 15 and 25 measure of each head of a trained GPT (experiments/head_scores.h):
// previous-token and word-start scores over val windows, the induction score over sequences of
// random tokens repeated once, each a mean over those inputs.
struct HeadScore {
  int64_t layer = 0, head = 0;
  double prev = 0, induction = 0, word_start = 0;
};
struct HeadScoreBaselines {  // what attention spread evenly over the past scores on the same inputs
  double prev = 0, induction = 0, word_start = 0;
};
// The thresholds the lessons read the scores against (the word-start one is a multiple of its baseline).
constexpr double kPreviousTokenThreshold = 0.3, kInductionThreshold = 0.3, kWordStartFactor = 2.0;
// `windows` windows of the model's block size spread evenly over `val`, and `sequences` repeated
// random sequences (period: half the block size, seeds 1, 2, ...).
std::vector<HeadScore> score_heads(GPT& model, const data::Tokenizer& tokenizer, const std::vector<int32_t>& val,
                                   int64_t windows, int64_t sequences, HeadScoreBaselines* baselines);
// Three lines, one per score: the heads at or over its threshold as "layer.head (score)", "-" for
// none; only those of `only_layer` when it is >= 0. In the language of `out`.
// The score table: a header of two lines, then a row per head (layer, head, each score per seed).
std::string score_table_header(const std::vector<int64_t>& seeds);
std::string score_table_row(const std::vector<std::vector<HeadScore>>& per_seed, size_t head_index);
std::string heads_over_thresholds(std::ostream& out, const std::vector<HeadScore>& scores,
                                  const HeadScoreBaselines& even, int64_t only_layer = -1);

// 15. Looking inside a trained transformer: the default GPT from two seeds, its heads scored,
// and the reverse model's cross-attention, measured with experiments/inspect.h.
struct InsideOptions {
  int64_t gpt_steps = 1500;                    // configs/default.json's own budget
  std::vector<int64_t> seeds = {1337, 1338};   // the default GPT is trained from each
  int64_t reverse_steps = 600;                 // of configs/reverse.json's 1500, to keep the lesson to minutes
  int64_t role_windows = 16;                   // val windows the scores are averaged over
  int64_t induction_sequences = 8;             // repeated random sequences the induction score is averaged over
  bool full_val = true;                        // the GPT's val loss over the whole val split (false: 20 batches)
  int64_t eval_iters = 0;                      // batches per loss estimate (0: each config's own, 20 and 10)
};
struct InsideResult {
  int64_t gpt_steps = 0, reverse_steps = 0, block_size = 0;
  std::vector<double> gpt_val_loss;               // per seed, the whole val split
  std::vector<std::vector<HeadScore>> scores;     // [seed][layer * heads + head]
  HeadScoreBaselines even;                        // what even attention scores on the same inputs
  AttentionMaps prompt_maps;                      // the first seed's model over the lesson's prompt
  AttentionMaps induction_maps;                   // the first seed's model over one repeated sequence
  int64_t induction_layer = 0;                    // the layer of its highest induction score
  double reverse_accuracy = -1;                   // exact-match on the held-out sequences
  CrossAttentionReport cross;                     // the share on the mirrored position, per decoder layer
};
InsideResult run_lesson_inside(std::ostream& out, const InsideOptions& options);
InsideResult run_lesson_inside(std::ostream& out);

// 16. Tokenizing Chinese: 我喜欢苹果 and the Tang poems as characters, bytes and BPE tokens.
struct TokenizeZhResult {
  std::vector<std::string> sentence_chars;    // 我 喜 欢 苹 果
  int64_t sentence_bytes = 0;                 // 15
  int64_t tang_chars = 0, tang_bytes = 0;     // the tang300 poems
  int64_t char_vocab = 0;                     // distinct characters in them
  std::vector<int64_t> sentence_counts;       // how often 我 喜 欢 苹 果 occur in the poems
  int64_t word_count = 0;                     // ... and the word 喜欢
  int64_t comma_count = 0, period_count = 0;  // ， and 。
  int64_t song_unknown = 0;                   // characters of the song100 poems not in that vocabulary
  std::vector<std::string> first_merges;      // the bytes of the first 12 merged tokens
  int32_t first_char_rank = -1;               // the first merge that makes a whole CJK ideograph
  int32_t first_word_rank = -1;               // ... and one of two or more ideographs
  std::string first_char, first_word;
  std::vector<int64_t> vocab_sizes;  // 256 512 1024 2048 4096
  std::vector<double> tang_tokens_per_char, song_tokens_per_char;
  std::vector<int64_t> sentence_tokens;  // 我喜欢苹果 at each vocabulary size
  double char_tokens_per_char = 1.0;
  std::vector<int64_t> embedding_params;  // V * 384, for each vocab and then the characters
  std::vector<double> chars_in_context;   // characters that 256 tokens hold
  double bytes_vs_chars_length = 0;       // tokens per character with bytes alone
};
TokenizeZhResult run_lesson_tokenize_zh(std::ostream& out);

// 17. Errata: the worked examples of articles 000, 003 and 004 recomputed.
struct ErrataResult {
  std::vector<double> pe;                                         // (3, 4) sinusoidal table, positions 0..2
  std::vector<double> apple_input;                                // embedding of 苹果 + PE(2)
  int64_t sinusoidal_params = 0, learned_params = 0;              // position parameters of a GPT
  std::vector<double> exps;                                       // e^x of the scaled scores of 苹果
  double exp_sum = 0, rounded_sum = 0;                            // 4.3535; 4.36 from the rounded terms
  std::vector<double> weights;                                    // softmax
  std::vector<double> output, only_self, uniform;                 // w . V for three choices of w
  int64_t head_size = 0, mha_params = 0, article_mha_params = 0;  // d_model 4, h 4
  int64_t mha_params_768 = 0, article_mha_params_768 = 0;         // d_model 768, h 12
  std::vector<double> article_head_sums;                          // the four example weight rows of 003's heads
  std::vector<double> pre_stds, post_stds;                        // per-token std after one Pre-LN / Post-LN block
  double pre_post_diff = 0;
  double norm_repeat_diff = 0, norm_grad_diff = 0;       // norm1(x) three times against once
  std::vector<double> unmasked_weights, masked_weights;  // (3, 3): 004's snippet, and assigned
  // The GPTs trained with and without the causal mask (errata_mask.cpp).
  int64_t leak_params = 0;
  std::vector<double> correct_losses, leaky_losses;     // training loss at every step
  double correct_train = 0, leaky_train = 0;            // teacher-forced, on training windows
  double correct_val = 0, leaky_val = 0;                // teacher-forced, on held-out windows
  double correct_generation = 0, leaky_generation = 0;  // from prefixes only, held out
  double correct_word_share = 0, leaky_word_share = 0;  // of the greedy samples' words
};
// A slow lesson (Lesson::slow): its two GPTs train for about 10 s of CPU, once per process.
ErrataResult run_lesson_errata(std::ostream& out);
// Its steps 1-7 (the articles' examples, no training) and 8-10 (errata_mask.cpp: the GPTs).
void errata_articles(std::ostream& out, ErrataResult& r);
void errata_mask_training(std::ostream& out, ErrataResult& r);

// 18. Scaling out: gradient accumulation against one big batch (real runs), a ring all-reduce
// simulated, its cost at 8 to 1024 GPUs (a model), and where data parallelism stops helping.
struct ScalingOutResult {
  int64_t gradient_elements = 0;
  double gradient_diff = 0;                                 // |mean of 2 micro-batch gradients - batch of 8| / max |g|
  std::vector<double> big, accum2, accum4, small;           // training losses: 8, 2 x 4, 4 x 2, 4 (no accumulation)
  double accum2_diff = 0, accum4_diff = 0, small_diff = 0;  // largest relative loss difference from `big`
  double ring_error = 0;                                    // simulated ring all-reduce against the direct sum
  double ring_sent_fraction = 0;                            // values sent per rank / buffer size: 2(N-1)/N
  int64_t default_params = 0, gpt2_params = 0;
  std::vector<double> default_ms, gpt2_ms;  // modelled all-reduce ms, per link (5) x GPUs (8 64 256 1024)
  std::vector<double> dp_share;             // share of a GPT-2 small step in the all-reduce, 8 64 256 512 GPUs
  std::vector<double> memory_gb;            // per GPU on 64: data parallel, ZeRO-1, -2, -3
};
ScalingOutResult run_lesson_scaling_out(std::ostream& out);
// 19. What attention costs: the T x T score matrix counted, and attention's forward + backward
// measured against the linear layers' at one width.
struct AttentionCostOptions {
  std::vector<int64_t> lengths = {64, 128, 256, 512, 1024, 2048, 4096};  // T
  int64_t n_embd = 128, n_head = 4;                                      // the default model's width
  int64_t work_per_length = 1 << 22;                                     // repeats at T: this / T^2, at least 1 ...
  int64_t max_repeats = 20;                                              // ... and at most this
};
struct AttentionCostResult {
  int64_t entries_2048 = 0, entries_32768 = 0;  // T^2
  double gpt2_probabilities_bytes_2048 = 0;     // 12 layers x 12 heads x 2048^2 x 4 bytes
  std::vector<double> count_ratio;              // attention / linear multiply-adds, per T
  int64_t count_crossover = 0;                  // T where the counts are equal (12 C - 1)
  std::vector<double> p_bytes, linear_bytes;    // kept for backward, per T
  std::vector<double> attention_ms, linear_ms;  // measured forward + backward, per T
  int64_t measured_crossover = 0;               // first T where attention took longer (0: none)
};
// A slow lesson (it measures for about a minute), once per process for given options.
AttentionCostResult run_lesson_attention_cost(std::ostream& out, const AttentionCostOptions& options);
AttentionCostResult run_lesson_attention_cost(std::ostream& out);

// 20. Why divide by sqrt(d_k): softmax over random scores with and without the scale, per d_k.
struct ScalingResult {
  int64_t rows = 0, keys = 0;
  double uniform_entropy = 0;                         // ln keys
  std::vector<int64_t> d_k;                           // 4 ... 1024
  std::vector<double> score_std, scaled_score_std;    // of q.k and q.k / sqrt(d_k)
  std::vector<double> max_weight, scaled_max_weight;  // mean largest weight per row
  std::vector<double> entropy, scaled_entropy;        // mean entropy per row (nats)
  std::vector<double> grad_norm, scaled_grad_norm;    // mean |d scores| per row
  std::vector<double> saturated, scaled_saturated;    // share of rows with a weight above 0.99
  double saturated_jacobian_max = 0;                  // of softmax([8, 1, 0, -1])
};
ScalingResult run_lesson_scaling(std::ostream& out);

// 21. The online softmax: a row read tile by tile, and a tiled causal attention against sf::attention.
struct OnlineSoftmaxResult {
  std::vector<double> running_max, running_sum;  // m and l after each tile
  std::vector<double> online_weights, softmax_weights;
  double weight_diff = 0;                            // max |online - softmax|
  std::vector<double> online_output;                 // acc / l (D = 2)
  double output_diff = 0;                            // against softmax(s) V
  double tiled_diff = 0;                             // tiled causal attention against sf::attention
  double engine_tiled_diff = 0;                      // the engine's tiled kernel against its stored one (output, grads)
  int64_t stored_entries = 0;                        // of the P sf::attention keeps
  std::vector<double> matrix_bytes, row_stat_bytes;  // T x T against 2 T floats, T = 256 ... 32768
};
OnlineSoftmaxResult run_lesson_online_softmax(std::ostream& out);

// 23. The KV cache's memory: bytes per token and context for MHA, GQA and MQA, and sampling
// measured with and without the cache.
struct KvCacheOptions {
  int64_t new_tokens = 200;  // sampled in the measurement
  int repeats = 1;
};
struct KvCacheResult {
  double engine_bytes_per_token = 0, formula_bytes_per_token = 0;  // the small GPT's cache
  std::vector<double> per_token_fp16, context_fp16;                // GPT-2 small MHA, GQA, MQA, then 7B MHA, GQA, MQA
  double cached_tokens_per_s = 0, uncached_tokens_per_s = 0;
  bool same_tokens = false;  // greedy: the cache changes the speed, not the tokens
};
KvCacheResult run_lesson_kv_cache(std::ostream& out, const KvCacheOptions& options);
KvCacheResult run_lesson_kv_cache(std::ostream& out);

// 22. Sliding windows: one GPT trained with model.window 4, 8, 16 and full attention.
struct WindowsOptions {
  SmallTraining training;                        // the budget of every model
  std::vector<int64_t> windows = {4, 8, 16, 0};  // 0: full causal attention
  int64_t val_windows = 256;                     // val windows of block_size the loss averages
  int64_t timed_length = 1024;                   // T of the timed attention
};
struct WindowsResult {
  std::vector<double> keys_per_query;       // at the training length
  std::vector<double> keys_per_query_long;  // at timed_length
  std::vector<double> val_loss;
  std::vector<double> attention_ms;  // measured forward + backward
};
WindowsResult run_lesson_windows(std::ostream& out, const WindowsOptions& options);
WindowsResult run_lesson_windows(std::ostream& out);

// 24. Positions past the training length: learned, sinusoidal, RoPE and ALiBi GPTs trained on 64
// and scored at every position up to 256.
struct ExtrapolationOptions {
  SmallTraining training;     // block_size: the training windows (64)
  int64_t long_length = 256;  // the windows they are scored on
  int64_t eval_windows = 64;  // val windows of long_length
  double tolerance = 0.1;     // "extrapolates": loss at 128-255 <= loss at 0-63 + this
};
struct ExtrapolationResult {
  std::string learned_error;                  // the engine's message past a learned table
  std::vector<std::string> names;             // learned (256 rows), sinusoidal, rope, alibi
  std::vector<double> in_range, middle, far;  // mean loss at 0-63, 64-127, 128-255
  std::vector<bool> extrapolates;
  std::vector<std::vector<double>> per_position;  // per model, positions 0 .. long_length-1
};
ExtrapolationResult run_lesson_extrapolation(std::ostream& out, const ExtrapolationOptions& options);
ExtrapolationResult run_lesson_extrapolation(std::ostream& out);

// 25. How many heads: one width (128) as 1, 2, 4 and 8 heads, each trained from two seeds alike;
// val loss and the heads' scores.
struct HeadsOptions {
  SmallTraining training;
  std::vector<int64_t> heads = {1, 2, 4, 8};
  std::vector<int64_t> seeds = {1337, 1338};   // initial weights and batches
  int64_t val_windows = 256;                   // for the val loss
  int64_t role_windows = 16;                   // val windows the scores are averaged over
  int64_t induction_sequences = 8;             // repeated random sequences for the induction score
  std::string prompt = "ROMEO:\nWhat light is this?";
};
struct HeadsResult {
  std::vector<int64_t> params;                              // the same for every head count
  std::vector<std::vector<double>> val_loss;                // [model][seed]
  std::vector<std::vector<std::vector<HeadScore>>> scores;  // [model][seed][layer * heads + head]
  HeadScoreBaselines even;
  int64_t prompt_length = 0;
};
HeadsResult run_lesson_heads(std::ostream& out, const HeadsOptions& options);
HeadsResult run_lesson_heads(std::ostream& out);

}  // namespace sf::lessons

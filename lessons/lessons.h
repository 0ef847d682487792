// lessons.h: one function per lesson. Each prints the lesson to `out` and returns the key
// numbers it printed, so the tests can assert them. The text of lesson N is lessons/NN_name.md.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// 1. Autograd by hand: L = a * tanh(a*b + c) at a = 2, b = -1, c = 0.5.
struct AutogradResult {
  double loss;
  std::vector<double> by_hand;      // dL/da, dL/db, dL/dc by the chain rule
  std::vector<double> by_engine;    // the same from L.backward()
  std::vector<double> by_finite_difference;
  std::string dot;                  // the graph in Graphviz DOT
};
AutogradResult run_lesson_autograd(std::ostream& out);

// 2. Broadcasting and gradcheck.
struct BroadcastingResult {
  std::vector<int64_t> broadcast_shape;  // of (2, 3) + (3)
  std::vector<double> bias_grad;         // the reduced gradient of the (3) bias
  std::vector<int64_t> col_grad_shape, row_grad_shape;  // (4, 1) * (3): each reduced to its input
  std::string unreduced_error;           // what the engine says when a backward forgets to reduce
  bool gradcheck_correct_ok;             // gradcheck of the correct bias_add passes
  bool gradcheck_buggy_ok;               // ... and of the one whose backward drops rows fails
  int64_t gradcheck_entries;             // Jacobian entries compared
  double buggy_analytic, buggy_numeric;  // the failing entry gradcheck names
};
BroadcastingResult run_lesson_broadcasting(std::ostream& out);

// 3. Token embeddings.
struct EmbeddingsResult {
  double lookup_vs_onehot;           // max |embedding(W, ids) - onehot(ids) @ W|
  double grad_lookup_vs_onehot;      // same for dW
  std::vector<double> grad_row_wo;   // dW row of 我 (used twice) = sum of its two upstream rows
  std::vector<double> grad_row_unused;  // dW row of a token not in the sentence (zeros)
  int64_t lookup_reads, onehot_mults;   // for GPT-2 sizes: T*C numbers read vs T*V*C multiplies
};
EmbeddingsResult run_lesson_embeddings(std::ostream& out);

// 5. Attention by hand (the worked example).
struct AttentionResult {
  std::vector<double> scores;          // 0.36, 0.81, 1.01
  std::vector<double> scaled;          // 0.18, 0.405, 0.505
  std::vector<double> weights;         // about 0.275, 0.344, 0.381
  std::vector<double> output;          // about 0.334, 0.483, 0.577, 0.321
  std::vector<double> output_rounded_weights;  // 0.3338, 0.4826, 0.5768, 0.3206
  std::vector<double> causal_weights;  // (3, 3) after the causal mask
  std::vector<double> padding_weights; // (4, 4) with the last key padded
  std::vector<double> fused_output;    // sf::attention's output for the same q, k, v (3, 4)
  std::vector<double> hand_output;     // softmax(QK^T/2 + mask) V written with ops (3, 4)
  std::vector<double> all_masked_row;  // softmax of a row that is entirely -inf
};
AttentionResult run_lesson_attention(std::ostream& out);

// 7. LayerNorm.
struct LayerNormResult {
  std::vector<double> means, stds;     // per token, before
  std::vector<double> out_means, out_stds;  // per token, after (0 and about 1)
  double scale_invariance;             // max |LN(10 x) - LN(x)|
  double fused_vs_composed;            // max |dx fused - dx composed from primitives|
  double grad_row_sum;                 // max |sum_c dx[t, c]|: the gradient has no mean component
  double grad_dot_xhat;                // max |sum_c dx[t, c] * xhat[t, c]|
};
LayerNormResult run_lesson_layernorm(std::ostream& out);

// 8. Feed-forward, GELU versus ReLU.
struct FeedForwardResult {
  std::vector<double> xs, relu, gelu, gelu_tanh, drelu, dgelu;  // the table
  double tanh_approx_max_error;   // max |gelu - gelu_tanh| on [-6, 6]
  double dead_relu_fraction;      // hidden units with zero ReLU gradient on the batch
  double zero_gelu_grad_fraction; // hidden units with zero GELU gradient (none)
  int64_t params_768;             // FFN parameters for C = 768, hidden 3072, with biases
  std::vector<int64_t> shapes;    // x, hidden, out shapes flattened: (T, C), (T, 4C), (T, C)
};
FeedForwardResult run_lesson_feedforward(std::ostream& out);

}  // namespace sf::lessons

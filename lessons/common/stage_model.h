// stage_model.h: the seven models of lesson 14, each one part more than the one before, built
// from the nn modules' public pieces, and the text they train on.
//
//   bigram        logits = W[idx]                                  W (V, V)
//   one_head      logits = lm_head(attn_1(wte[idx] + wpe[pos]))     one causal head of size C
//   heads         the same with H heads of size C / H               (no extra parameter)
//   feed_forward  logits = lm_head(mlp(attn(x)))                    mlp: C -> 4C -> C, GELU
//   residual      x = x + attn(x); x = x + mlp(x); logits = lm_head(x)   (no LayerNorm)
//   layernorm     x = x + attn(ln_1(x)); x = x + mlp(ln_2(x)); logits = lm_head(ln_f(x))
//   blocks        N such blocks (the GPT's layout)
//
// No biases anywhere, and the head is not tied to wte, so every count has a short formula.
// Legend: B batch, T time, C channels, H heads, N blocks, V vocab.
#pragma once
#include <optional>
#include <string>

#include "data/lm_batches.h"
#include "lessons/lesson.h"
#include "nn/blocks.h"

namespace sf::lessons {

enum class Stage { bigram, one_head, heads, feed_forward, residual, layernorm, blocks };
constexpr int kStages = 7;

struct StageConfig {
  Stage stage = Stage::bigram;
  int64_t vocab_size = 0;   // V
  int64_t block_size = 32;  // T
  int64_t n_embd = 64;      // C
  int64_t n_head = 4;       // H (stages heads and later)
  int64_t n_layer = 4;      // N (stage blocks)
  uint64_t seed = 1337;     // initial weights
};

class StageModel : public Module {
 public:
  explicit StageModel(const StageConfig& config);
  Tensor forward(const IntTensor& idx);  // (B, T) -> (B, T, V)
  Tensor loss(const IntTensor& idx, const IntTensor& targets);
  const StageConfig& config() const { return config_; }

 private:
  StageConfig config_;
  std::optional<Embedding> wte;            // (V, V) for the bigram table, else (V, C)
  std::optional<Embedding> wpe;            // (T, C)
  std::optional<MultiHeadAttention> attn;  // stages one_head .. residual
  std::optional<FeedForward> mlp;          // stages feed_forward and residual
  ModuleList<SelfAttentionBlock> h;        // stages layernorm (1 block) and blocks (N)
  std::optional<LayerNorm> ln_f;
  std::optional<Linear> lm_head;  // (V, C)
};

// The parameter count by its formula (independent of the modules), and the formula as text
// with the numbers put in: "V*C + T*C + 4*C^2 + C*V = ...".
int64_t stage_parameter_formula(const StageConfig& c);
std::string stage_formula_text(const StageConfig& c);
// One line: what this stage adds and why it should help.
std::string stage_explanation(Stage s, Lang lang);

// The text a lesson trains on: "shakespeare" (the shipped Tiny Shakespeare) or "tang" (the Tang
// poems of Debian's fortunes-zh), as characters, split 90% train / 10% val by position.
struct StageData {
  data::Tokens train, val;
  std::shared_ptr<const data::Tokenizer> tokenizer;
  std::string description;
};
StageData load_stage_data(const std::string& corpus);

}  // namespace sf::lessons

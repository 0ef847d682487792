// config.h: an experiment's configuration, as typed structs with defaults, filled from JSON.
//
// Each section lists its fields once, in `fields()`, with one line of documentation next to
// each: that list drives JSON reading (unknown keys are errors with a "did you mean"), JSON
// writing (the resolved config saved in every run directory) and configs/README.md
// (`scratchformer config-doc`), so the documentation cannot drift from the code; the Chinese
// edition, configs/README.zh.md, gives each key's text in train/config_doc_zh.cpp. An option
// named by a string in JSON is held as its enum (train/options.h): the name is read and written
// here only.
//
//   {"model": {"n_layer": 4}, "optim": {"lr": 1e-3}}      a config file; missing keys keep defaults
//   scratchformer train cfg.json --set optim.lr=3e-4      an override, value parsed as JSON
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "train/options.h"

namespace sf {

struct Config;

struct ModelConfig {
  ModelType type = ModelType::gpt;
  int64_t n_layer = 4;
  int64_t n_head = 4;
  int64_t n_embd = 128;
  int64_t block_size = 64;
  int64_t n_decoder_layer = 0;
  int64_t d_ff = 0;
  double dropout = 0.0;
  bool bias = true;
  Activation activation = Activation::gelu;
  PosEncoding pos_encoding = PosEncoding::learned;
  NormPlacement norm = NormPlacement::pre;
  bool tie_weights = true;
  bool scale_embeddings = false;
  InitScheme init = InitScheme::gpt2;
  int64_t window = 0;
  AttentionKernel attention = AttentionKernel::automatic;
  int64_t n_kv_head = 0;
  bool recompute = false;

  template <class F>
  void fields(F&& f) {
    f("type", type,
      "model family: \"gpt\" (decoder-only language model) or \"transformer\" (encoder-decoder, for seq2seq tasks)");
    f("n_layer", n_layer,
      "number of transformer blocks (in each of the encoder and decoder stacks for \"transformer\")");
    f("n_head", n_head, "attention heads per layer; n_embd must be divisible by it");
    f("n_embd", n_embd, "model width d_model: size of every token's vector");
    f("block_size", block_size, "longest sequence the model accepts (rows of the positional table)");
    f("n_decoder_layer", n_decoder_layer, "\"transformer\" only: decoder blocks; 0 means n_layer");
    f("d_ff", d_ff, "hidden size of each feed-forward layer; 0 means 4 * n_embd");
    f("dropout", dropout, "dropout probability in [0, 1) on attention weights and residual branches");
    f("bias", bias, "whether Linear and LayerNorm layers have a bias (nanoGPT's `bias`)");
    f("activation", activation, "feed-forward nonlinearity: \"gelu\" (exact erf form), \"gelu_tanh\" or \"relu\"");
    f("pos_encoding", pos_encoding,
      "positions: \"learned\", \"sinusoidal\", \"rope\" (rotary), \"alibi\" or \"none\" (no positions: a causal GPT still tells order apart through its mask)");
    f("norm", norm, "LayerNorm placement: \"pre\" (x + f(LN(x)), GPT-2) or \"post\" (LN(x + f(x)), Vaswani et al.)");
    f("tie_weights", tie_weights, "share the token embedding with the output (LM head) weights");
    f("scale_embeddings", scale_embeddings,
      "gpt: initialise the token embedding N(0, 1/n_embd) and multiply token vectors by sqrt(n_embd), so each element entering block 1 has variance 1 (Vaswani et al.; Xiong et al.'s setting); \"transformer\" always scales, as the paper");
    f("init", init, "weight initialisation: \"gpt2\" (normal 0.02, residual projections / sqrt(2L)) or \"xavier\"");
    f("window", window, "sliding-window attention width (each query sees the last `window` keys); 0 = full");
    f("attention", attention,
      "attention kernel: \"stored\" (keeps the T x T probabilities for backward), \"tiled\" (FlashAttention's online softmax: keeps one log-sum-exp per row and recomputes the probabilities in backward) or \"auto\" (tiled for rows of T x S >= 1024 x 1024, stored below: the rule measured in bench/README.md)");
    f("n_kv_head", n_kv_head,
      "key/value heads of self-attention: 0 or n_head = standard multi-head, 1 = multi-query (MQA), a divisor of n_head = grouped-query (GQA); the KV cache holds only these heads");
    f("recompute", recompute,
      "gpt: activation recomputation: keep only the input of each block's two halves (attention, MLP) in forward and recompute each half in backward (less memory, about a third more compute); needs dropout 0");
  }
  // The rules of this section's values (config.cpp); each error names its key:
  // ConfigError "model.n_head: ..., got X". The same form for every section below.
  void validate() const;
};

struct DataConfig {
  Dataset dataset = Dataset::synthetic;
  std::string path = "";
  data::TokenizerKind tokenizer = data::TokenizerKind::chars;
  int64_t bpe_vocab_size = 512;
  double val_fraction = 0.1;
  int64_t block_size = 0;
  int64_t corpus_tokens = 200000;
  int64_t corpus_val_tokens = 20000;
  int64_t corpus_order = 2;
  int64_t corpus_seed = 1234;
  int64_t task_min_len = 1;
  int64_t task_max_len = 8;
  int64_t task_symbols = 10;
  int64_t task_eval_size = 500;
  std::string cache_dir = "";

  template <class F>
  void fields(F&& f) {
    f("dataset", dataset,
      "what to train on: \"synthetic\" (built-in Markov corpus, no files), \"text\" (data.path), \"shakespeare\" (Tiny Shakespeare, shipped in data/corpora/), \"tang\" / \"song\" (the Tang and Song poems of Debian's fortunes-zh: poem lines only, titles and authors dropped so the model learns the form; one blank line between poems), or a seq2seq task: \"copy\", \"reverse\", \"sort\", \"addition\"");
    f("path", path,
      "text file or folder of .txt files, for dataset \"text\"; for \"tang\"/\"song\" another fortunes-zh file (default: the package's); an error with any other dataset; regular files only, at most 1 GiB of text");
    f("tokenizer", tokenizer,
      "for text datasets: \"char\" (Unicode code points) or \"bpe\" (byte-level BPE trained on the text)");
    f("bpe_vocab_size", bpe_vocab_size, "vocabulary size the BPE tokenizer learns (at least 256)");
    f("val_fraction", val_fraction, "fraction of the text held out (at the end) for validation");
    f("block_size", block_size, "training window length in tokens; 0 means model.block_size");
    f("corpus_tokens", corpus_tokens, "synthetic corpus: training text length in tokens");
    f("corpus_val_tokens", corpus_val_tokens, "synthetic corpus: validation text length in tokens");
    f("corpus_order", corpus_order, "synthetic corpus: symbols of context the Markov source uses (1 or 2)");
    f("corpus_seed", corpus_seed, "seed of the synthetic corpus's Markov source (changes the language itself)");
    f("task_min_len", task_min_len, "seq2seq tasks: shortest input (items, or digits per number for addition)");
    f("task_max_len", task_max_len, "seq2seq tasks: longest input (items, or digits per number for addition)");
    f("task_symbols", task_symbols, "copy/reverse/sort: distinct content symbols (addition always uses the 10 digits)");
    f("task_eval_size", task_eval_size, "seq2seq tasks: examples in the fixed held-out evaluation set");
    f("cache_dir", cache_dir,
      "where downloads and token caches (tokens/) are kept, never beside your text; empty means $SF_DATA_DIR, else ~/.cache/scratchformer");
  }
  // Compares with model.* (block_size, type); with check_files, also that data.path exists.
  void validate(const Config& c, bool check_files) const;
};

struct OptimConfig {
  OptimizerKind name = OptimizerKind::adamw;
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.99;
  double eps = 1e-8;
  double weight_decay = 0.1;
  DecaySet decay = DecaySet::matrices;
  double momentum = 0.0;
  bool nesterov = false;
  double grad_clip = 1.0;
  double clip_value = 0.0;

  template <class F>
  void fields(F&& f) {
    f("name", name, "optimizer: \"adamw\" (decoupled weight decay), \"adam\" or \"sgd\"");
    f("lr", lr, "peak learning rate (the schedule scales it)");
    f("beta1", beta1, "Adam/AdamW: decay of the first-moment (mean) estimate");
    f("beta2", beta2, "Adam/AdamW: decay of the second-moment (uncentered variance) estimate");
    f("eps", eps, "Adam/AdamW: added to sqrt(v) in the denominator");
    f("weight_decay", weight_decay, "weight decay (decoupled for adamw, L2 in the gradient for adam and sgd)");
    f("decay", decay,
      "which parameters weight decay applies to: \"matrices\" (weights of Linear layers, not embeddings, biases or LayerNorm), \"all_matrices\" (every 2-D tensor incl. embeddings, as nanoGPT) or \"all\"");
    f("momentum", momentum, "sgd: momentum factor; 0 = plain SGD");
    f("nesterov", nesterov, "sgd: Nesterov momentum");
    f("grad_clip", grad_clip, "clip the global L2 norm of the gradients to this (0 = off)");
    f("clip_value", clip_value, "clip every gradient element to [-v, v] (0 = off)");
  }
  void validate() const;
};

struct ScheduleConfig {
  ScheduleKind name = ScheduleKind::cosine;
  int64_t warmup_steps = 100;
  double min_lr = 1e-4;
  int64_t decay_steps = 0;

  template <class F>
  void fields(F&& f) {
    f("name", name,
      "learning-rate schedule: \"constant\", \"cosine\" (warmup then cosine to min_lr), \"linear\" (warmup then linear to min_lr) or \"noam\" (n_embd^-0.5 * min(step^-0.5, step * warmup^-1.5), scaled by lr)");
    f("warmup_steps", warmup_steps, "linear warmup length in steps, lr * (step+1)/(warmup+1); 0 = none");
    f("min_lr", min_lr, "floor the cosine/linear decay ends at");
    f("decay_steps", decay_steps, "step at which the decay reaches min_lr; 0 means train.steps");
  }
  void validate(const Config& c) const;  // against train.steps and optim.lr
};

// The most micro-batches a step may accumulate (train.grad_accum_steps); with at most 2^20 ranks
// (a record's run.world_size) ranks x accumulation stays far inside int64.
constexpr int64_t kMaxGradAccumSteps = 4096;

struct TrainConfig {
  int64_t steps = 2000;
  int64_t batch_size = 12;
  int64_t grad_accum_steps = 1;
  int64_t eval_interval = 250;
  int64_t eval_iters = 20;
  bool eval_full = false;
  int64_t log_interval = 10;
  int64_t seed = 1337;
  RngKind rng = RngKind::xoshiro;
  int64_t threads = 0;
  double label_smoothing = 0.0;
  int64_t samples = 3;
  int64_t sample_tokens = 200;
  double max_loss = 1e4;
  std::string reference = "";
  double reference_val_loss = 0.0;

  template <class F>
  void fields(F&& f) {
    f("steps", steps, "optimizer steps to run");
    f("batch_size", batch_size, "sequences per step (per micro-batch when grad_accum_steps > 1 or under mpirun)");
    f("grad_accum_steps", grad_accum_steps,
      "micro-batches of batch_size whose gradients each optimizer step sums: one step on a batch grad_accum_steps times larger (times the ranks under mpirun), with the memory of one micro-batch");
    f("eval_interval", eval_interval, "evaluate (and checkpoint) every this many steps, and at the end");
    f("eval_iters", eval_iters, "random batches per split averaged by each evaluation (nanoGPT's estimate)");
    f("eval_full", eval_full, "at the end, also evaluate on the whole val split (non-overlapping windows)");
    f("log_interval", log_interval, "print a log line every this many steps when not on a terminal");
    f("seed", seed, "seed of every random choice (init, batches, dropout): same seed, same run bit for bit");
    f("rng", rng,
      "random numbers: \"xoshiro\" (ours, seeded from seed) or \"torch\" (PyTorch's CPU generator, shared as nanoGPT's train.py shares it: torch.manual_seed(seed), the model's init, then the batches by torch.randint; reproduces a nanoGPT run draw for draw; GPT with init \"gpt2\" only; dropout masks still come from ours)");
    f("threads", threads, "BLAS threads; 0 = $SF_NUM_THREADS or all cores");
    f("label_smoothing", label_smoothing, "cross-entropy label smoothing in [0, 1)");
    f("samples", samples, "samples printed at the end of training (0 = none)");
    f("sample_tokens", sample_tokens, "length of each printed sample in tokens");
    f("max_loss", max_loss, "stop with an error when the training loss is NaN or above this (divergence)");
    f("reference", reference,
      "a known result on the same data, printed beside the final val loss estimate, e.g. \"nanoGPT's CPU recipe (2000 steps)\" (\"\" = none)");
    f("reference_val_loss", reference_val_loss,
      "that result's val loss, the same eval_iters-batch estimate (with train.reference)");
  }
  void validate(const Config& c) const;  // train.rng "torch" against model.*
};

struct PrecisionConfig {
  Precision dtype = Precision::fp32;
  bool loss_scaling = true;
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;

  template <class F>
  void fields(F&& f) {
    f("dtype", dtype, "emulated compute precision: \"fp32\", \"fp16\" or \"bf16\" (master weights stay fp32)");
    f("loss_scaling", loss_scaling, "fp16: dynamic loss scaling (GradScaler); ignored for fp32/bf16");
    f("init_scale", init_scale, "fp16: initial loss scale");
    f("growth_factor", growth_factor, "fp16: scale multiplier after growth_interval finite steps");
    f("backoff_factor", backoff_factor, "fp16: scale multiplier when a gradient overflows (that step is skipped)");
    f("growth_interval", growth_interval, "fp16: consecutive finite steps before the scale grows");
  }
  void validate() const;
};

struct OutputConfig {
  std::string run_dir = "runs/default";
  int64_t checkpoint_interval = 0;
  bool save_best = true;
  bool overwrite = false;
  bool plot = true;

  template <class F>
  void fields(F&& f) {
    f("run_dir", run_dir, "directory for the resolved config, metrics, checkpoints and the loss plot");
    f("checkpoint_interval", checkpoint_interval,
      "write checkpoint `last` every this many steps; 0 means at every evaluation");
    f("save_best", save_best, "also keep checkpoint `best`, the one with the lowest val loss");
    f("overwrite", overwrite, "allow starting a fresh run in a run_dir that already holds one");
    f("plot", plot, "draw loss.png with gnuplot at the end (skipped with a note when gnuplot is absent)");
  }
  void validate() const;
};

// The whole experiment. Sections are visited in this order everywhere.
struct Config {
  std::string description = "";
  ModelConfig model;
  DataConfig data;
  OptimConfig optim;
  ScheduleConfig schedule;
  TrainConfig train;
  PrecisionConfig precision;
  OutputConfig output;

  template <class F>
  void sections(F&& f) {
    f("model", model, "The network");
    f("data", data, "What it learns from");
    f("optim", optim, "The optimizer and gradient clipping");
    f("schedule", schedule, "The learning rate over time");
    f("train", train, "The loop: length, batch, evaluation, seed");
    f("precision", precision, "Mixed-precision emulation and loss scaling");
    f("output", output, "Where results go");
  }
};

// Reads a config from parsed JSON: missing keys keep their defaults; an unknown key, a wrong
// type or a non-object section throws ConfigError naming the key path. Does not validate values.
Config config_from_json(const nlohmann::json& j);
// The full config (every field, defaults included) as JSON, in declaration order of `fields()`.
nlohmann::json config_to_json(const Config& c);

// Applies one "section.key=value" override to raw config JSON. The value is parsed as JSON
// (3e-4, true, "x", [1]) and taken as a plain string when it is not valid JSON.
void apply_override(nlohmann::json& j, const std::string& assignment);

// Checks values that are impossible on their own or together (lr <= 0, n_embd % n_head != 0,
// warmup longer than the run, ...): throws ConfigError "section.key: what is wrong, got X".
// With check_files, also that data.path exists (sampling a saved run needs no data, so it
// validates without).
void validate_config(const Config& c, bool check_files = true);

// For a seq2seq task: the task's own checks (data::check_seq2seq_config), then that its longest
// sequence fits model.block_size, refused naming data.task_max_len before any example is drawn.
// validate_config calls it; so does the task, for a config made in code.
void check_task_fits_model(const Config& c);

// Reads a JSON file, applies the overrides in order, fills the structs and validates.
// Errors name where the value came from: "configs/x.json: optim.lr: must be > 0, got -1", or
// "--set optim.lr=-1: optim.lr: must be > 0, got -1" when a --set gave it. A key given twice in
// one JSON object is an error (JSON parsers differ on which one wins; we do not guess).
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {});
inline constexpr uintmax_t kMaxConfigBytes = 1 << 20;  // 1 MiB: a config is a few hundred bytes

// The last of `overrides` (as given: "optim.lr=1e-2") that sets `key` ("optim.lr"), or any key of
// the section when `key` is a section ("optim"); nullptr when none does. Later --set win, so the
// search runs from the last. load_config's errors and the resume checks name their source with it.
const std::string* last_override_of(const std::vector<std::string>& overrides, const std::string& key);

// The language of the config reference: en (configs/README.md) or zh (configs/README.zh.md).
enum class DocLang { en, zh };
// configs/README.md: every section and field with its default and its documentation, then the
// ready configs found in `configs_dir` (each with its "description"), when it is not empty. In
// Chinese (configs/README.zh.md) the texts come from train/config_doc_zh.cpp, keyed by the same
// names; a key or a ready config it has no text for keeps its English one.
std::string config_doc_markdown(const std::string& configs_dir = "", DocLang lang = DocLang::en);

// True for the sequence-to-sequence tasks ("copy", "reverse", "sort", "addition").
bool is_seq2seq_dataset(Dataset dataset);
// The data library's task for a seq2seq dataset; ConfigError naming data.dataset for another.
data::TaskKind seq2seq_task_of(Dataset dataset);

// Levenshtein distance (insertions, deletions, substitutions), for "did you mean".
size_t edit_distance(const std::string& a, const std::string& b);
// The closest of `candidates` to `word` if it is close enough to be a likely typo, else "".
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace sf

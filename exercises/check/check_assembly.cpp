// check_assembly.cpp: the checks of exercises 19-23 (lesson 14, build a GPT): causal
// self-attention, the Pre-LN block, the GPT forward, one training step and generate(). Each is
// compared with the framework's own module on the same weights (a small GPT whose every weight
// is random, so a forgotten bias or LayerNorm weight shows), in float64 and float32, and the
// forward passes are gradient-checked through your pieces' backward functions.
#include <cmath>
#include <memory>

#include "autograd/ops.h"
#include "exercises/check/checker.h"
#include "exercises/exercise.h"
#include "nn/sampling.h"
#include "optim/adam.h"
#include "optim/clip.h"
#include "optim/schedule.h"

namespace sf::exercise {

// A GPT of 2 blocks, C = 8, 2 heads, V = 11: the configuration the assembly exercises assume
// (learned positions, Pre-LN, GELU with tanh, biases, tied head, no dropout).
static GPTConfig tiny_config(int64_t block_size = 8) {
  return assembly_gpt_config(/*vocab_size=*/11, block_size, /*n_layer=*/2, /*n_head=*/2, /*n_embd=*/8);
}

// Every weight random (LayerNorm weights around 1): a piece that skips one changes the output.
static std::unique_ptr<GPT> tiny_gpt(DType dtype, uint64_t seed, int64_t block_size = 8) {
  auto model = std::make_unique<GPT>(tiny_config(block_size));
  model->to(dtype);
  Generator gen(seed);
  for (auto& [name, p] : model->named_parameters()) {
    std::vector<double> v(static_cast<size_t>(p.numel()));
    const bool ln_weight = name.find("ln_") != std::string::npos && name.find("weight") != std::string::npos;
    for (double& x : v) x = (ln_weight ? 1.0 : 0.0) + 0.4 * gen.normal();
    Tensor t = p;
    set_values(t, v);
  }
  model->eval();
  return model;
}

static IntTensor random_ids(int64_t B, int64_t T, int64_t V, uint64_t seed) {
  Generator gen(seed);
  std::vector<int32_t> ids(static_cast<size_t>(B * T));
  for (int32_t& id : ids) id = static_cast<int32_t>(gen.randint(V));
  return IntTensor({B, T}, ids);
}

static Tensor random_of(const Shape& shape, uint64_t seed, DType dtype) { return random_f64(shape, seed).to(dtype); }

static AttentionMask causal() {
  AttentionMask m;
  m.causal = true;
  return m;
}

// Float32 tolerances: the same math in another order differs by a few ulps per op.
static constexpr double kAtol32 = 2e-5, kRtol32 = 2e-4;

// ---- 19 causal self-attention ----
void check_self_attention(Report& r) {
  const char* hint =
      "q, k, v are the three C-wide chunks of c_attn's output, in that order; scores = q k^T / sqrt(D), "
      "masked where key s > S - T + t, your_softmax over the keys, times v; merge the heads, then c_proj";
  auto values = [](DType dtype, double atol, double rtol) {
    auto model = tiny_gpt(dtype, 191);
    MultiHeadAttention& attn = model->h[0].attn;
    Tensor x = random_of({2, 5, 8}, 192, dtype);
    NoGradGuard no_grad;
    return compare(attn.forward(x, causal()), causal_self_attention(attn, x, nullptr), atol, rtol);
  };
  r.check(
      "values on (2, 5, 8), 2 heads, float64", [=] { return values(DType::f64, 1e-9, 1e-7); }, hint);
  r.check(
      "float64 gradient check: x, c_attn and c_proj",
      [] {
        auto model = tiny_gpt(DType::f64, 193);
        MultiHeadAttention& attn = model->h[0].attn;
        Tensor x = random_f64({1, 4, 8}, 194).requires_grad_();
        return gradient_check(
            [&](const std::vector<Tensor>& in) { return causal_self_attention(attn, in[0], nullptr); },
            {x, attn.c_attn->weight, attn.c_attn->bias, attn.c_proj.weight},
            {"x", "c_attn.weight", "c_attn.bias", "c_proj.weight"});
      },
      "build it from sf ops on x and the weights (no values copied out), with your_softmax for the weights; "
      "if values passed, your softmax backward (exercise 6) is the suspect");
  r.check(
      "with a KV cache: 3 tokens, then 1, then 2, against the whole sequence at once",
      [] {
        auto model = tiny_gpt(DType::f64, 195);
        MultiHeadAttention& attn = model->h[0].attn;
        Tensor x = random_f64({2, 6, 8}, 196);
        NoGradGuard no_grad;
        Tensor whole = attn.forward(x, causal());  // (2, 6, 8)
        KVCache cache;
        const int64_t cuts[] = {0, 3, 4, 6};
        for (int i = 0; i < 3; ++i) {
          Tensor part = causal_self_attention(attn, slice(x, 1, cuts[i], cuts[i + 1]), &cache);
          std::string d = compare(slice(whole, 1, cuts[i], cuts[i + 1]), part);
          if (!d.empty())
            return "positions " + std::to_string(cuts[i]) + ".." + std::to_string(cuts[i + 1] - 1) + ": " + d;
          if (cache.length() != cuts[i + 1])
            return "after positions up to " + std::to_string(cuts[i + 1] - 1) + " the cache holds " +
                   std::to_string(cache.length()) + " positions, expected " + std::to_string(cuts[i + 1]);
        }
        return std::string();
      },
      "append the new keys and values to the cache (kv_cache_append) before attending, attend over all of "
      "cache->k and cache->v, and offset the mask: query t sits at position S - T + t");
  r.check(
      "edge: one token (T = 1) sees only itself",
      [] {
        auto model = tiny_gpt(DType::f64, 197);
        MultiHeadAttention& attn = model->h[1].attn;
        Tensor x = random_f64({3, 1, 8}, 198);
        NoGradGuard no_grad;
        return compare(attn.forward(x, causal()), causal_self_attention(attn, x, nullptr));
      },
      hint);
  r.check(
      "float32: values on (2, 5, 8) in float32, result float32",
      [=] {
        auto model = tiny_gpt(DType::f32, 199);
        Tensor x = random_of({2, 5, 8}, 192, DType::f32);
        NoGradGuard no_grad;
        Tensor got = causal_self_attention(model->h[0].attn, x, nullptr);
        if (got.defined() && got.dtype() != DType::f32) return std::string("the result is float64 for float32 inputs");
        return values(DType::f32, kAtol32, kRtol32);
      },
      "make the mask in x's dtype (Tensor::from_vector(.., x.dtype())) so no float64 tensor enters a float32 model");
}

// ---- 20 the Pre-LN block ----
void check_transformer_block(Report& r) {
  const char* hint =
      "Pre-LN: h = x + attn(ln_1(x)), out = h + c_proj(gelu(c_fc(ln_2(h)))): LayerNorm goes on the "
      "sublayer's input, never on the residual sum (that is Post-LN)";
  auto values = [](DType dtype, double atol, double rtol, double eps) {
    auto model = tiny_gpt(dtype, 201);
    SelfAttentionBlock& block = model->h[1];
    block.ln_1.eps = eps;
    block.ln_2.eps = eps;
    Tensor x = random_of({2, 5, 8}, 202, dtype);
    NoGradGuard no_grad;
    return compare(block.forward(x, causal()), transformer_block(block, x, nullptr), atol, rtol);
  };
  r.check(
      "values on (2, 5, 8), float64", [=] { return values(DType::f64, 1e-9, 1e-7, 1e-5); }, hint);
  r.check(
      "values with LayerNorm eps 0.5 (the block's own eps, not 1e-5)",
      [=] { return values(DType::f64, 1e-9, 1e-7, 0.5); }, "pass block.ln_1.eps and block.ln_2.eps to your_layer_norm");
  r.check(
      "float64 gradient check: x, ln_1, c_fc and c_proj of the MLP",
      [] {
        auto model = tiny_gpt(DType::f64, 203);
        SelfAttentionBlock& block = model->h[0];
        Tensor x = random_f64({1, 4, 8}, 204).requires_grad_();
        return gradient_check([&](const std::vector<Tensor>& in) { return transformer_block(block, in[0], nullptr); },
                              {x, block.ln_1.weight, block.ln_1.bias, block.mlp.c_fc.weight, block.mlp.c_proj.bias},
                              {"x", "ln_1.weight", "ln_1.bias", "mlp.c_fc.weight", "mlp.c_proj.bias"});
      },
      "use your_layer_norm and your_gelu and sf ops on x; when values pass but this fails, check exercises 12 "
      "and 13 (their backward functions are what runs here)");
  r.check(
      "with a KV cache: 4 tokens, then 2, against the whole sequence",
      [] {
        auto model = tiny_gpt(DType::f64, 205);
        SelfAttentionBlock& block = model->h[0];
        Tensor x = random_f64({1, 6, 8}, 206);
        NoGradGuard no_grad;
        Tensor whole = block.forward(x, causal());
        KVCache cache;
        std::string a = compare(slice(whole, 1, 0, 4), transformer_block(block, slice(x, 1, 0, 4), &cache));
        if (!a.empty()) return "positions 0..3: " + a;
        std::string b = compare(slice(whole, 1, 4, 6), transformer_block(block, slice(x, 1, 4, 6), &cache));
        return b.empty() ? b : "positions 4..5 after the cached 4: " + b;
      },
      "give the cache to causal_self_attention");
  r.check(
      "float32: values on (2, 5, 8)", [=] { return values(DType::f32, kAtol32, kRtol32, 1e-5); }, hint);
}

// ---- 21 the GPT forward ----
void check_gpt_forward(Report& r) {
  const char* hint =
      "x = wte[idx] + wpe[positions]; every block; ln_f; logits = x wte^T (lm_head->weight); loss = "
      "your_cross_entropy on (B*T, V) logits and (B*T) targets";
  auto values = [](DType dtype, double atol, double rtol) {
    auto model = tiny_gpt(dtype, 211);
    IntTensor idx = random_ids(2, 7, 11, 212), targets = random_ids(2, 7, 11, 213);
    NoGradGuard no_grad;
    GPTOutput out = gpt_forward(*model, idx, &targets, nullptr);
    std::string d = compare(model->forward(idx), out.logits, atol, rtol);
    if (!d.empty()) return "logits " + d;
    if (!out.loss.defined()) return std::string("the loss is undefined although targets were given");
    d = compare(model->loss(idx, targets), out.loss, atol, rtol);
    return d.empty() ? d : "loss " + d;
  };
  r.check(
      "logits and loss on (2, 7), float64", [=] { return values(DType::f64, 1e-9, 1e-7); }, hint);
  r.check(
      "without targets: logits only, the loss undefined",
      [] {
        auto model = tiny_gpt(DType::f64, 214);
        IntTensor idx = random_ids(1, 3, 11, 215);
        NoGradGuard no_grad;
        GPTOutput out = gpt_forward(*model, idx, nullptr, nullptr);
        if (out.loss.defined()) return std::string("the loss is defined although targets is null");
        return compare(model->forward(idx), out.logits);
      },
      "compute the loss only when targets != nullptr");
  r.check(
      "float64 gradient check of the loss: wte, wpe, ln_f and a block's c_attn",
      [] {
        auto model = tiny_gpt(DType::f64, 216);
        IntTensor idx = random_ids(1, 4, 11, 217), targets = random_ids(1, 4, 11, 218);
        return gradient_check(
            [&](const std::vector<Tensor>&) { return gpt_forward(*model, idx, &targets, nullptr).loss; },
            {model->wte.weight, model->wpe->weight, model->ln_f->weight, model->h[1].attn.c_attn->weight},
            {"wte.weight", "wpe.weight", "ln_f.weight", "h.1.attn.c_attn.weight"});
      },
      "use your_embedding for both tables and your_cross_entropy; the tied head means wte gets gradient from both "
      "ends. When values pass but this fails, exercises 3 and 7 are the suspects");
  r.check(
      "with a cache: 5 tokens, then 1, then 2: positions continue from the cache",
      [] {
        auto model = tiny_gpt(DType::f64, 219);
        IntTensor idx = random_ids(2, 8, 11, 220);
        NoGradGuard no_grad;
        Tensor whole = model->forward(idx);  // (2, 8, 11)
        GPTCache cache;
        const int64_t cuts[] = {0, 5, 6, 8};
        for (int i = 0; i < 3; ++i) {
          const int64_t a = cuts[i], b = cuts[i + 1];
          std::vector<int32_t> part;
          for (int64_t row = 0; row < 2; ++row)
            for (int64_t t = a; t < b; ++t) part.push_back(idx[row * 8 + t]);
          GPTOutput out = gpt_forward(*model, IntTensor({2, b - a}, part), nullptr, &cache);
          std::string d = compare(slice(whole, 1, a, b), out.logits);
          if (!d.empty()) return "positions " + std::to_string(a) + ".." + std::to_string(b - 1) + ": " + d;
        }
        return std::string();
      },
      "the new tokens' positions start at cache->length() (read it before the blocks append to it); give "
      "block i the cache's layer i");
  r.check(
      "edge: a position past block_size is refused (ShapeError)",
      [] {
        auto model = tiny_gpt(DType::f64, 221);
        NoGradGuard no_grad;
        try {
          gpt_forward(*model, random_ids(1, 9, 11, 222), nullptr, nullptr);
        } catch (const ShapeError&) { return std::string(); }
        return std::string("9 tokens with block_size 8 were accepted; throw ShapeError (there is no position 8)");
      },
      "check offset + T <= block_size before looking up positions");
  r.check(
      "float32: logits and loss on (2, 7)", [=] { return values(DType::f32, kAtol32, kRtol32); },
      "keep every tensor in the model's dtype");
}

// ---- 22 one training step ----
namespace {
struct StepCase {
  DType dtype;
  double atol, rtol;
};
}  // namespace

// Three steps of the learner's train_step against the framework's loop on an identical model.
static std::string compare_steps(const StepCase& c) {
  TrainStepConfig config;
  config.schedule.lr = 3e-2;
  config.schedule.min_lr = 3e-3;
  config.schedule.warmup_steps = 1;
  config.schedule.decay_steps = 3;
  config.adamw.beta1 = 0.8;
  config.adamw.beta2 = 0.95;
  config.adamw.eps = 1e-2;  // large, so the update depends on the gradients' scale (and the clipping)
  config.adamw.weight_decay = 0.5;
  config.max_norm = 0.5;
  auto mine = tiny_gpt(c.dtype, 221), ref = tiny_gpt(c.dtype, 221);
  mine->train();
  ref->train();
  AdamOptions options;
  options.beta1 = config.adamw.beta1;
  options.beta2 = config.adamw.beta2;
  options.eps = config.adamw.eps;
  options.weight_decay = config.adamw.weight_decay;
  options.decay_rule = DecayRule::all_matrices();
  // The framework's AdamW updates float32 parameters; in float64 the same update is written out
  // below (torch's formula, adam.h) on the gradients the framework's clip_grad_norm left.
  std::unique_ptr<AdamW> opt;
  if (c.dtype == DType::f32) opt = std::make_unique<AdamW>(ref->named_parameters(), options);
  std::vector<std::vector<double>> m64, v64;
  for (const Tensor& p : ref->parameters()) {
    m64.emplace_back(static_cast<size_t>(p.numel()), 0.0);
    v64.emplace_back(static_cast<size_t>(p.numel()), 0.0);
  }
  auto adamw64 = [&](double lr, int64_t t) {
    std::vector<Tensor> params = ref->parameters();
    const double bc1 = 1.0 - std::pow(options.beta1, static_cast<double>(t));
    const double bc2 = 1.0 - std::pow(options.beta2, static_cast<double>(t));
    for (size_t i = 0; i < params.size(); ++i) {
      std::vector<double> p = params[i].to_vector(), g = params[i].grad().to_vector();
      const double wd = params[i].dim() >= 2 ? options.weight_decay : 0.0;
      for (size_t j = 0; j < p.size(); ++j) {
        p[j] *= 1.0 - lr * wd;
        m64[i][j] = options.beta1 * m64[i][j] + (1.0 - options.beta1) * g[j];
        v64[i][j] = options.beta2 * v64[i][j] + (1.0 - options.beta2) * g[j] * g[j];
        p[j] -= lr / bc1 * m64[i][j] / (std::sqrt(v64[i][j]) / std::sqrt(bc2) + options.eps);
      }
      set_values(params[i], p);
    }
  };
  ScheduleOptions schedule;
  schedule.kind = ScheduleKind::cosine;
  schedule.lr = config.schedule.lr;
  schedule.min_lr = config.schedule.min_lr;
  schedule.warmup_steps = config.schedule.warmup_steps;
  schedule.decay_steps = config.schedule.decay_steps;
  TrainState state;
  for (int64_t step = 0; step < 3; ++step) {
    IntTensor x = random_ids(2, 6, 11, 230 + step), y = random_ids(2, 6, 11, 240 + step);
    // the framework's step
    ref->zero_grad();
    Tensor loss = ref->loss(x, y);
    loss.backward();
    const double norm = clip_grad_norm(ref->named_parameters(), config.max_norm);
    if (opt) {
      opt->set_lr(lr_at(schedule, step));
      opt->step();
    } else {
      adamw64(lr_at(schedule, step), step + 1);
    }
    // yours
    StepResult got = train_step(*mine, x, y, state, config);
    const std::string at = "step " + std::to_string(step) + ": ";
    std::string d = compare(loss.item(), got.loss, c.atol, c.rtol);
    if (!d.empty()) return at + "loss " + d;
    d = compare(norm, got.grad_norm, c.atol, c.rtol);
    if (!d.empty()) return at + "grad_norm (before clipping) " + d;
    if (norm <= config.max_norm) return at + "internal: this check's gradients should need clipping";
    d = compare(lr_at(schedule, step), got.lr, 1e-12, 1e-9);
    if (!d.empty()) return at + "lr " + d;
    if (state.step != step + 1)
      return at + "state.step is " + std::to_string(state.step) + " after the step, expected " +
             std::to_string(step + 1);
    auto want = ref->named_parameters();
    auto have = mine->named_parameters();
    for (size_t i = 0; i < want.size(); ++i) {
      d = compare(want[i].second, have[i].second, c.atol, c.rtol);
      if (!d.empty()) return at + "after the update, " + want[i].first + " " + d;
    }
  }
  return std::string();
}

void check_train_step(Report& r) {
  const char* hint =
      "zero_grad, loss = gpt_forward(..).loss, backward, clip the values of every p.grad() together, "
      "lr = warmup_cosine_lr(schedule, state.step), adamw_step with t = state.step + 1 (decay only dim >= 2), "
      "write each parameter back, state.step += 1";
  r.check(
      "three steps in float64 against the framework's AdamW, clipping and cosine schedule (betas 0.8 / 0.95, "
      "eps 1e-2, weight decay 0.5, max_norm 0.5, warmup 1)",
      [] {
        return compare_steps({DType::f64, 1e-9, 1e-6});
      },
      hint);
  r.check(
      "the first step creates the moments: one zero vector per parameter",
      [] {
        auto model = tiny_gpt(DType::f64, 250);
        model->train();
        TrainState state;
        TrainStepConfig config;
        config.schedule.decay_steps = 10;
        train_step(*model, random_ids(1, 4, 11, 251), random_ids(1, 4, 11, 252), state, config);
        const auto params = model->parameters();
        if (state.m.size() != params.size() || state.v.size() != params.size())
          return "state.m has " + std::to_string(state.m.size()) + " and state.v " + std::to_string(state.v.size()) +
                 " vectors, expected one per parameter (" + std::to_string(params.size()) + ")";
        for (size_t i = 0; i < params.size(); ++i)
          if (static_cast<int64_t>(state.m[i].size()) != params[i].numel())
            return "state.m[" + std::to_string(i) + "] has " + std::to_string(state.m[i].size()) +
                   " values, expected " + std::to_string(params[i].numel());
        return std::string();
      },
      "when state.m is empty, push one vector of p.numel() zeros per parameter, in model.parameters() order");
  r.check(
      "float32: three steps against the framework",
      [] {
        return compare_steps({DType::f32, 1e-5, 1e-3});
      },
      "write the parameters back with set_values, which keeps their dtype");
}

// ---- 23 sampling and generate() ----
// A row of V logits with two equal maxima (a tie the order must break by index).
static std::vector<double> sample_logits(uint64_t seed) {
  std::vector<double> z = random_f64({13}, seed, 1.5).to_vector();
  z[9] = z[4] = 3.0;
  return z;
}

static std::string compare_draws(const SamplingConfig& s, uint64_t seed) {
  std::vector<double> z = sample_logits(seed);
  SampleOptions o;
  o.temperature = s.temperature;
  o.top_k = s.top_k;
  o.top_p = s.top_p;
  Generator a(seed), b(seed);
  for (int i = 0; i < 200; ++i) {
    const int64_t want = sample_from_logits(z.data(), static_cast<int64_t>(z.size()), o, a);
    const int64_t got = sample_token(z, s, b);
    if (want != got)
      return "draw " + std::to_string(i) + ": expected token " + std::to_string(want) + ", got " + std::to_string(got);
  }
  return std::string();
}

static std::string compare_generate(const SamplingConfig& s, int64_t block, int64_t T0, int64_t n, uint64_t seed) {
  auto model = tiny_gpt(DType::f64, seed, block);
  IntTensor ids = random_ids(1, T0, 11, seed + 1);
  std::vector<int32_t> prompt = ids.data;
  SampleOptions o;
  o.temperature = s.temperature;
  o.top_k = s.top_k;
  o.top_p = s.top_p;
  o.max_new_tokens = n;
  Generator a(seed), b(seed);
  std::vector<int32_t> want = sample_gpt(*model, prompt, o, a);
  GPTCache cache;
  std::vector<int32_t> got = generate(*model, prompt, n, s, b, cache);
  if (got.size() != want.size())
    return "returned " + std::to_string(got.size()) + " tokens, expected " + std::to_string(want.size()) +
           " (the prompt, then the new ones)";
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i])
      return "token " + std::to_string(i) + ": expected " + std::to_string(want[i]) + ", got " + std::to_string(got[i]);
  if (T0 + n - 1 <= block && cache.length() != T0 + n - 1)
    return "the cache holds " + std::to_string(cache.length()) + " positions after generating, expected " +
           std::to_string(T0 + n - 1) + " (the prompt and every new token but the last, each fed once)";
  return std::string();
}

void check_generate(Report& r) {
  const char* draw_hint =
      "stable_sort the ids by logit (largest first), keep top_k, weights exp((z - z_max) / temperature), cut to "
      "the shortest prefix whose weight reaches top_p * total, then r = gen.uniform() * kept total and walk";
  r.check(
      "sample_token: 200 draws at temperature 1 against the framework's sampler", [] { return compare_draws({}, 231); },
      draw_hint);
  r.check(
      "sample_token: temperature 0.5",
      [] {
        return compare_draws({0.5, 0, 1.0}, 232);
      },
      "divide (z - z_max) by the temperature before exp");
  r.check(
      "sample_token: top_k 3",
      [] {
        return compare_draws({1.0, 3, 1.0}, 233);
      },
      "keep only the 3 largest logits before the draw (the total is over those only)");
  r.check(
      "sample_token: top_p 0.6, and top_k 5 with top_p 0.8",
      [] {
        std::string a = compare_draws({1.0, 0, 0.6}, 234);
        if (!a.empty()) return "top_p 0.6: " + a;
        std::string b = compare_draws({0.8, 5, 0.8}, 235);
        return b.empty() ? b : "top_k 5, top_p 0.8, temperature 0.8: " + b;
      },
      "top_p keeps the shortest prefix of the sorted ids whose weight reaches top_p times the total of the "
      "top_k kept (add weights while the sum is below that); top_k first, then top_p");
  r.check(
      "edge: temperature 0 and top_k 1 give the most likely token (the first of two equal ones)",
      [] {
        std::vector<double> z = sample_logits(236);
        Generator gen(236);
        for (SamplingConfig s : {SamplingConfig{0.0, 0, 1.0}, SamplingConfig{1.0, 1, 1.0}}) {
          int64_t got = sample_token(z, s, gen);
          if (got != 4)
            return "temperature " + std::to_string(s.temperature) + ", top_k " + std::to_string(s.top_k) +
                   ": expected token 4 (logit 3, tied with token 9), got " + std::to_string(got);
        }
        return std::string();
      },
      "std::max_element returns the first maximum; a stable sort keeps equal logits in id order");
  r.check(
      "generate: 5 new tokens after a 3-token prompt, against the framework (the cache then holds 7 positions)",
      [] { return compare_generate({}, 8, 3, 5, 237); },
      "feed the prompt once, then only the newest token, through gpt_forward with the same cache; sample "
      "from the last position's logits");
  r.check(
      "generate: 12 new tokens past block_size 8 (the window slides), temperature 0.7, top_k 6, top_p 0.9",
      [] {
        return compare_generate({0.7, 6, 0.9}, 8, 5, 12, 238);
      },
      "when cache.length() + 1 would pass block_size, clear the cache and feed the last block_size tokens");
}

}  // namespace sf::exercise

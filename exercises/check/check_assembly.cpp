// check_assembly.cpp: the checks of exercises 19-23 (lesson 14 build-gpt): causal
// self-attention, the Pre-LN block, the GPT forward, one training step and generate(). Each is
// compared with the framework's own module on the same weights (a small GPT whose every weight
// is random, so a forgotten bias or LayerNorm weight shows), in float64 and float32, and the
// forward passes are gradient-checked through your pieces' backward functions.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "autograd/graph.h"
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

// "" when the graph below `out` has a node of each of your pieces in `yours` ("your_softmax", ...)
// and none of the framework's ops that do the same job; else what is missing or what was used
// instead. The assembly exercises are there to run your pieces: a block built from the
// framework's LayerNorm passes every value check and learns nothing of yours.
static std::string uses_your_pieces(const Tensor& out, const std::vector<std::string>& yours) {
  if (!out.defined() || !out.requires_grad())
    return tr("the result has no gradient history, so it cannot be traced back to your pieces",
              "结果没有梯度记录，无法追溯到你写的各块");
  std::vector<std::string> ops;
  for (const Tensor& t : topological_order(out))
    if (t.grad_fn()) ops.push_back(t.grad_fn()->op);
  auto called = [&](const std::string& prefix) {
    for (const std::string& op : ops)
      if (op.rfind(prefix, 0) == 0) return true;
    return false;
  };
  // The framework's op for a job, and the piece of yours that does it.
  const std::pair<const char*, const char*> theirs[] = {{"softmax", "your_softmax"},
                                                        {"log_softmax", "your_cross_entropy"},
                                                        {"cross_entropy", "your_cross_entropy"},
                                                        {"layer_norm", "your_layer_norm"},
                                                        {"gelu", "your_gelu"},
                                                        {"linear_gelu", "your_gelu"},
                                                        {"embedding", "your_embedding"},
                                                        {"attention", "your_softmax"},
                                                        {"attention_packed", "your_softmax"},
                                                        {"attention_packed_tiled", "your_softmax"},
                                                        {"slice_heads", "exercise::split_heads"},
                                                        {"merge_heads", "exercise::merge_heads"}};
  for (const auto& [op, mine] : theirs)
    for (const std::string& o : ops)
      if (o == op)
        return tr(std::string("the framework's ") + op + " op is in your graph: use " + mine +
                      " (the assembly exercises run your own pieces; sf::" + op +
                      ", ln_1.forward, mlp.forward and "
                      "the like are the framework's)",
                  std::string("你的计算图里有框架的 ") + op + " 运算：请用 " + mine +
                      "（组装练习运行的是你自己写的各块；sf::" + op + "、ln_1.forward、mlp.forward 之类是框架的）");
  for (const std::string& piece : yours)
    if (!called(piece))
      return tr("your code does not call " + piece + " (the assembly exercises run your own pieces)",
                "你的代码没有调用 " + piece + "（组装练习运行的是你自己写的各块）");
  return "";
}

// ---- 19 causal self-attention ----
// The likely mistakes, each computed with the framework's ops: what a learner's attention returns
// when it makes that one mistake, so that a value mismatch can name it.
namespace {
enum class AttnSlip {
  no_scale,
  no_mask,
  mask_hides_self,
  mask_one_ahead,
  mask_no_offset,
  heads_merged_wrong,
  no_proj,
  q_from_k,
  q_k_swapped,
  cache_replaced
};
}  // namespace

// The attention of the last T positions of xs (B, S, C) over all S positions, with one slip.
static Tensor attention_with(const MultiHeadAttention& attn, const Tensor& xs, int64_t T, AttnSlip slip) {
  const int64_t B = xs.size(0), C = xs.size(2), H = attn.n_head(), D = C / H;
  Tensor x = slip == AttnSlip::cache_replaced ? slice(xs, 1, xs.size(1) - T, xs.size(1)) : xs;
  const int64_t S = x.size(1);
  Tensor qkv = linear(x, attn.c_attn->weight, attn.c_attn->bias);  // (B, S, 3C)
  auto heads = [&](int64_t chunk, int64_t from) {                  // (B, H, S - from, D)
    Tensor part = slice(slice(qkv, 2, chunk * C, (chunk + 1) * C), 1, from, S) * 1.0;
    return transpose(reshape(part, {B, S - from, H, D}), 1, 2);
  };
  const int64_t q_chunk = slip == AttnSlip::q_from_k || slip == AttnSlip::q_k_swapped ? 1 : 0;
  Tensor q = heads(q_chunk, S - T), k = heads(slip == AttnSlip::q_k_swapped ? 0 : 1, 0), v = heads(2, 0);
  Tensor scores = matmul(q, transpose(k, -2, -1));
  if (slip != AttnSlip::no_scale) scores = scores / std::sqrt(static_cast<double>(D));
  std::vector<double> m(static_cast<size_t>(T * S), 0.0);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s = 0; s < S; ++s) {
      const int64_t last = slip == AttnSlip::mask_no_offset ? t : S - T + t;  // the last key query t sees
      bool masked = s > last;
      if (slip == AttnSlip::no_mask) masked = false;
      if (slip == AttnSlip::mask_hides_self) masked = s >= last;
      if (slip == AttnSlip::mask_one_ahead) masked = s > last + 1;
      m[static_cast<size_t>(t * S + s)] = masked ? 1.0 : 0.0;
    }
  scores =
      masked_fill(scores, Tensor::from_vector(m, {1, 1, T, S}, x.dtype()), -std::numeric_limits<double>::infinity());
  Tensor y = matmul(softmax(scores, -1), v);  // (B, H, T, D)
  Tensor merged =
      slip == AttnSlip::heads_merged_wrong ? reshape(y * 1.0, {B, T, C}) : reshape(transpose(y, 1, 2) * 1.0, {B, T, C});
  return slip == AttnSlip::no_proj ? merged : linear(merged, attn.c_proj.weight, attn.c_proj.bias);
}

// The mistakes that show without a cache (`cached`: those that show only with one).
static std::vector<Mistake> attention_slips(const MultiHeadAttention& attn, const Tensor& xs, int64_t T, bool cached) {
  std::vector<std::pair<AttnSlip, std::string>> slips;
  if (cached) {
    slips = {{AttnSlip::mask_no_offset, tr("the mask ignores the cache offset (s > t, but query t sits at position "
                                           "S - T + t of the S keys)",
                                           "掩码忽略了缓存偏移（用了 s > t，而查询 t 位于 S 个键中的位置 S - T + t）")},
             {AttnSlip::cache_replaced, tr("the new keys and values replace the cache instead of being appended to it",
                                           "新的键和值替换了缓存，而不是追加到缓存之后")}};
  } else {
    slips = {
        {AttnSlip::no_scale, tr("the scores are not divided by sqrt(head_dim)", "注意力分数没有除以 sqrt(head_dim)")},
        {AttnSlip::no_mask, tr("there is no causal mask (each position also sees the later ones)",
                               "没有因果掩码（每个位置也看到了后面的位置）")},
        {AttnSlip::mask_hides_self, tr("the mask also hides each query's own key (s >= t where it must be s > t)",
                                       "掩码把查询自己的键也遮住了（用了 s >= t，应为 s > t）")},
        {AttnSlip::mask_one_ahead, tr("the mask is off by one: each query also sees the next key (s > t + 1 where it "
                                      "must be s > t)",
                                      "掩码差了一位：每个查询还看到了下一个键（用了 s > t + 1，应为 s > t）")},
        {AttnSlip::heads_merged_wrong,
         tr("the heads are merged without moving the head axis back first ((B, H, T, D) "
            "reshaped straight to (B, T, C))",
            "合并多头时没有先把头的维度换回去（(B, H, T, D) 直接 reshape 成 (B, T, C)）")},
        {AttnSlip::no_proj, tr("the output projection c_proj is left out", "漏掉了输出投影 c_proj")},
        {AttnSlip::q_from_k, tr("q is taken from k's chunk of c_attn's output (the chunks are q, k, v, in that order)",
                                "q 取自 c_attn 输出中 k 的那一块（三块依次是 q、k、v）")},
        {AttnSlip::q_k_swapped, tr("q and k are swapped (c_attn's output holds q, k, v, in that order)",
                                   "q 和 k 取反了（c_attn 的输出依次是 q、k、v）")}};
  }
  std::vector<Mistake> mistakes;
  NoGradGuard no_grad;
  for (auto& [slip, what] : slips) mistakes.push_back({what, attention_with(attn, xs, T, slip)});
  return mistakes;
}

void check_self_attention(Report& r) {
  const char* hint =
      "q, k, v are the three C-wide chunks of c_attn's output, in that order; scores = q k^T / sqrt(D), "
      "masked where key s > S - T + t, your_softmax over the keys, times v; merge the heads, then c_proj";
  auto values = [](DType dtype, double atol, double rtol) {
    auto model = tiny_gpt(dtype, 191);
    MultiHeadAttention& attn = model->h[0].attn;
    Tensor x = random_of({2, 5, 8}, 192, dtype);
    NoGradGuard no_grad;
    Tensor got = causal_self_attention(attn, x, nullptr);
    return diagnose(compare(attn.forward(x, causal()), got, atol, rtol), got, attention_slips(attn, x, 5, false), atol,
                    rtol);
  };
  r.check(
      "values on (2, 5, 8), 2 heads, float64", [=] { return values(DType::f64, 1e-9, 1e-7); }, hint);
  r.check(
      "it runs your pieces: your_softmax, exercise::split_heads and merge_heads, not the framework's",
      [] {
        auto model = tiny_gpt(DType::f64, 191);
        Tensor x = random_f64({1, 3, 8}, 192).requires_grad_();
        return uses_your_pieces(causal_self_attention(model->h[0].attn, x, nullptr), {"your_softmax"});
      },
      "your_softmax(scores) for the weights; exercise::split_heads and exercise::merge_heads (written with the "
      "namespace: sf::split_heads and sf::merge_heads are the framework's)");
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
          std::string d = diagnose(compare(slice(whole, 1, cuts[i], cuts[i + 1]), part), part,
                                   attention_slips(attn, slice(x, 1, 0, cuts[i + 1]), cuts[i + 1] - cuts[i], true));
          if (!d.empty())
            return tr("positions ", "位置 ") + std::to_string(cuts[i]) + ".." + std::to_string(cuts[i + 1] - 1) +
                   tr(": ", "：") + d;
          if (cache.length() != cuts[i + 1])
            return tr("after positions up to ", "处理到位置 ") + std::to_string(cuts[i + 1] - 1) +
                   tr(" the cache holds ", " 之后缓存里有 ") + std::to_string(cache.length()) +
                   tr(" positions, expected ", " 个位置，应为 ") + std::to_string(cuts[i + 1]);
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
        if (got.defined() && got.dtype() != DType::f32)
          return tr("the result is float64 for float32 inputs", "输入是 float32，结果却是 float64");
        return values(DType::f32, kAtol32, kRtol32);
      },
      "make the mask in x's dtype (Tensor::from_vector(.., x.dtype())) so no float64 tensor enters a float32 model");
}

// ---- 20 the Pre-LN block ----
// The block with each likely mistake, from the framework's attention and MLP: LayerNorm in the
// wrong place, a residual left out, the wrong LayerNorm or a fixed eps.
static std::vector<Mistake> block_slips(SelfAttentionBlock& block, const Tensor& x) {
  NoGradGuard no_grad;
  const LayerNorm &ln_1 = block.ln_1, &ln_2 = block.ln_2;
  auto ln = [](const LayerNorm& l, const Tensor& t, double eps) { return layer_norm(t, l.weight, l.bias, eps); };
  auto attn = [&](const Tensor& t) { return block.attn.forward(t, causal()); };
  auto mlp = [&](const Tensor& t) { return block.mlp.forward(t); };
  const double e1 = ln_1.eps, e2 = ln_2.eps;
  Tensor h = x + attn(ln(ln_1, x, e1));
  Tensor h_post = ln(ln_1, x + attn(x), e1);
  auto pre_ln = [&](double eps1, double eps2) {
    Tensor hh = x + attn(ln(ln_1, x, eps1));
    return hh + mlp(ln(ln_2, hh, eps2));
  };
  std::vector<Mistake> m = {
      {tr("it is Post-LN: LayerNorm after each residual add (ln(x + sublayer(x))), not on the sublayer's input",
          "写成了 Post-LN：LayerNorm 放在每次残差相加之后（ln(x + sublayer(x))），而不是放在子层的输入上"),
       ln(ln_2, h_post + mlp(h_post), e2)},
      {tr("ln_1 is applied after the residual add (ln_1(x + attn(x))) instead of on attention's input",
          "ln_1 放在了残差相加之后（ln_1(x + attn(x))），而不是放在注意力的输入上"),
       h_post + mlp(ln(ln_2, h_post, e2))},
      {tr("ln_2 is applied after the residual add (ln_2(h + mlp(h))) instead of on the MLP's input",
          "ln_2 放在了残差相加之后（ln_2(h + mlp(h))），而不是放在 MLP 的输入上"),
       ln(ln_2, h + mlp(h), e2)},
      {tr("the attention's residual is missing (h = attn(ln_1(x)) without the + x)",
          "漏掉了注意力的残差连接（h = attn(ln_1(x))，没有 + x）"),
       [&] {
         Tensor a = attn(ln(ln_1, x, e1));
         return a + mlp(ln(ln_2, a, e2));
       }()},
      {tr("the MLP's residual is missing (out = mlp(ln_2(h)) without the + h)",
          "漏掉了 MLP 的残差连接（out = mlp(ln_2(h))，没有 + h）"),
       mlp(ln(ln_2, h, e2))},
      {tr("ln_1 is used where ln_2 belongs (the MLP's input)", "在 MLP 的输入上用了 ln_1，应该用 ln_2"),
       h + mlp(ln(ln_1, h, e1))},
      {tr("LayerNorm uses eps 1e-5 instead of the block's own ln_1.eps and ln_2.eps",
          "LayerNorm 用了 eps 1e-5，而不是这个块自己的 ln_1.eps 和 ln_2.eps"),
       pre_ln(1e-5, 1e-5)},
      {tr("ln_1 uses eps 1e-5 instead of ln_1.eps", "ln_1 用了 eps 1e-5，而不是 ln_1.eps"), pre_ln(1e-5, e2)},
      {tr("ln_2 uses eps 1e-5 instead of ln_2.eps", "ln_2 用了 eps 1e-5，而不是 ln_2.eps"), pre_ln(e1, 1e-5)},
  };
  return m;
}

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
    Tensor got = transformer_block(block, x, nullptr);
    return diagnose(compare(block.forward(x, causal()), got, atol, rtol), got, block_slips(block, x), atol, rtol);
  };
  r.check(
      "values on (2, 5, 8), float64", [=] { return values(DType::f64, 1e-9, 1e-7, 1e-5); }, hint);
  r.check(
      "it runs your pieces: your_layer_norm, your_gelu and your attention, not the framework's",
      [] {
        auto model = tiny_gpt(DType::f64, 201);
        Tensor x = random_f64({1, 3, 8}, 202).requires_grad_();
        return uses_your_pieces(transformer_block(model->h[0], x, nullptr),
                                {"your_layer_norm", "your_gelu", "your_softmax"});
      },
      "your_layer_norm(x, ln_1.weight, ln_1.bias, ln_1.eps) rather than ln_1.forward(x); your_gelu on c_fc's "
      "output rather than mlp.forward; causal_self_attention (exercise 19) rather than attn.forward");
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
        if (!a.empty()) return tr("positions 0..3: ", "位置 0..3：") + a;
        std::string b = compare(slice(whole, 1, 4, 6), transformer_block(block, slice(x, 1, 4, 6), &cache));
        return b.empty() ? b : tr("positions 4..5 after the cached 4: ", "缓存了 4 个之后的位置 4..5：") + b;
      },
      "give the cache to causal_self_attention");
  r.check(
      "float32: values on (2, 5, 8)", [=] { return values(DType::f32, kAtol32, kRtol32, 1e-5); }, hint);
}

// ---- 21 the GPT forward ----
namespace {
enum class GptSlip { no_positions, no_final_norm, positions_restart, blocks_without_cache };
}  // namespace

// The logits of idx (B, T) with one slip, from the framework's blocks: with `cache`, idx follows
// the positions already in it (which this call appends to, as the learner's forward would).
static Tensor gpt_with(GPT& model, const IntTensor& idx, GptSlip slip, GPTCache* cache) {
  const int64_t T = idx.shape[1];
  const bool restart = slip == GptSlip::positions_restart || slip == GptSlip::blocks_without_cache;
  const int64_t offset = cache != nullptr && !restart ? cache->length() : 0;
  std::vector<int32_t> pos(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) pos[static_cast<size_t>(t)] = static_cast<int32_t>(offset + t);
  Tensor x = embedding(model.wte.weight, idx);
  if (slip != GptSlip::no_positions) x = x + embedding(model.wpe->weight, IntTensor({T}, pos));
  if (cache != nullptr && cache->layers.size() != model.h.size()) cache->layers.assign(model.h.size(), KVCache{});
  const bool cached = cache != nullptr && slip != GptSlip::blocks_without_cache;
  for (size_t i = 0; i < model.h.size(); ++i) x = model.h[i].forward(x, causal(), cached ? &cache->layers[i] : nullptr);
  if (slip != GptSlip::no_final_norm) x = model.ln_f->forward(x);
  return linear(x, model.lm_head->weight);
}

static std::vector<Mistake> gpt_slips(GPT& model, const IntTensor& idx) {
  NoGradGuard no_grad;
  return {{tr("the position embeddings are not added (x = wte[idx] without + wpe[positions])",
              "没有加上位置嵌入（x = wte[idx]，缺了 + wpe[positions]）"),
           gpt_with(model, idx, GptSlip::no_positions, nullptr)},
          {tr("the final LayerNorm ln_f is left out before the head", "在输出头之前漏掉了最后的 LayerNorm ln_f"),
           gpt_with(model, idx, GptSlip::no_final_norm, nullptr)}};
}

// The loss computed from the right logits, but summed or averaged over the wrong count.
static std::vector<Mistake> loss_slips(const Tensor& loss, int64_t B, int64_t T) {
  NoGradGuard no_grad;
  return {{tr("the loss is summed over the B*T positions instead of averaged", "损失对 B*T 个位置求了和，而不是取平均"),
           loss * static_cast<double>(B * T)},
          {tr("the loss is divided by B instead of B*T", "损失除以了 B，而不是 B*T"), loss * static_cast<double>(T)}};
}

void check_gpt_forward(Report& r) {
  const char* hint =
      "x = wte[idx] + wpe[positions]; every block; ln_f; logits = x wte^T (lm_head->weight); loss = "
      "your_cross_entropy on (B*T, V) logits and (B*T) targets";
  auto values = [](DType dtype, double atol, double rtol) {
    auto model = tiny_gpt(dtype, 211);
    IntTensor idx = random_ids(2, 7, 11, 212), targets = random_ids(2, 7, 11, 213);
    NoGradGuard no_grad;
    GPTOutput out = gpt_forward(*model, idx, &targets, nullptr);
    std::string d =
        diagnose(compare(model->forward(idx), out.logits, atol, rtol), out.logits, gpt_slips(*model, idx), atol, rtol);
    if (!d.empty()) return tr("logits ", "logits ") + d;
    if (!out.loss.defined())
      return tr("the loss is undefined although targets were given", "给了 targets，损失却是未定义的（undefined）");
    Tensor loss = model->loss(idx, targets);
    d = diagnose(compare(loss, out.loss, atol, rtol), out.loss, loss_slips(loss, 2, 7), atol, rtol);
    return d.empty() ? d : tr("loss ", "损失 ") + d;
  };
  r.check(
      "logits and loss on (2, 7), float64", [=] { return values(DType::f64, 1e-9, 1e-7); }, hint);
  r.check(
      "it runs your pieces: your_embedding, your blocks, your_layer_norm and your_cross_entropy",
      [] {
        auto model = tiny_gpt(DType::f64, 211);
        IntTensor idx = random_ids(1, 3, 11, 212), targets = random_ids(1, 3, 11, 213);
        return uses_your_pieces(
            gpt_forward(*model, idx, &targets, nullptr).loss,
            {"your_embedding", "your_layer_norm", "your_gelu", "your_softmax", "your_cross_entropy"});
      },
      "your_embedding for wte and wpe, transformer_block (exercise 20) for each block, your_layer_norm for ln_f and "
      "your_cross_entropy for the loss, not the framework's modules or sf::cross_entropy");
  r.check(
      "without targets: logits only, the loss undefined",
      [] {
        auto model = tiny_gpt(DType::f64, 214);
        IntTensor idx = random_ids(1, 3, 11, 215);
        NoGradGuard no_grad;
        GPTOutput out = gpt_forward(*model, idx, nullptr, nullptr);
        if (out.loss.defined()) return tr("the loss is defined although targets is null", "targets 为空，损失却有定义");
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
        Tensor whole = model->forward(idx);   // (2, 8, 11)
        GPTCache cache, restarted, uncached;  // the learner's, and the two slips' own caches
        const int64_t cuts[] = {0, 5, 6, 8};
        for (int i = 0; i < 3; ++i) {
          const int64_t a = cuts[i], b = cuts[i + 1];
          std::vector<int32_t> part;
          for (int64_t row = 0; row < 2; ++row)
            for (int64_t t = a; t < b; ++t) part.push_back(idx[row * 8 + t]);
          const IntTensor ids({2, b - a}, part);
          GPTOutput out = gpt_forward(*model, ids, nullptr, &cache);
          std::vector<Mistake> slips = {
              {tr("the positions restart at 0 at every call instead of continuing from cache->length()",
                  "每次调用位置都从 0 重新开始，而不是接着 cache->length() 往下数"),
               gpt_with(*model, ids, GptSlip::positions_restart, &restarted)},
              {tr("the blocks do not get the cache (each call attends only to its own tokens, from position 0)",
                  "没有把缓存传给各个块（每次调用只关注自己的这几个词元，位置也从 0 开始）"),
               gpt_with(*model, ids, GptSlip::blocks_without_cache, &uncached)}};
          std::string d = diagnose(compare(slice(whole, 1, a, b), out.logits), out.logits, slips);
          if (!d.empty())
            return tr("positions ", "位置 ") + std::to_string(a) + ".." + std::to_string(b - 1) + tr(": ", "：") + d;
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
        } catch (const ShapeError& e) {
          // Without a check of its own, the lookup of position 8 in wpe throws instead, naming an
          // id outside the table: true, but not what a user of gpt_forward can act on.
          if (std::string(e.what()).find("block_size") != std::string::npos) return std::string();
          return tr("the ShapeError does not name block_size (\"", "ShapeError 没有提到 block_size（“") + e.what() +
                 tr("\"): check offset + T <= block_size yourself, before the lookup, and say so",
                    "”）：在查表之前自己检查 offset + T <= block_size，并在错误信息里写明");
        }
        return tr("9 tokens with block_size 8 were accepted; throw ShapeError (there is no position 8)",
                  "block_size 为 8 时 9 个词元被接受了；应抛出 ShapeError（没有位置 8）");
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

// The configuration of the checked steps: every hyperparameter away from its default.
static TrainStepConfig step_config() {
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
  return config;
}

static ScheduleOptions step_schedule(const TrainStepConfig& config) {
  ScheduleOptions schedule;
  schedule.kind = ScheduleKind::cosine;
  schedule.lr = config.schedule.lr;
  schedule.min_lr = config.schedule.min_lr;
  schedule.warmup_steps = config.schedule.warmup_steps;
  schedule.decay_steps = config.schedule.decay_steps;
  return schedule;
}

// The batch of step `step`: (2, 6) ids.
static IntTensor step_ids(uint64_t seed, int64_t step) {
  return random_ids(2, 6, 11, seed + static_cast<uint64_t>(step));
}

namespace {
// One step as the learner's train_step reports it, and the parameters it leaves.
struct StepRecord {
  double loss, grad_norm, lr;
  std::vector<Tensor> params;
};
enum class StepSlip { grads_not_zeroed, not_clipped, config_lr, lr_one_late, lr_one_early, decay_everything };
}  // namespace

static std::vector<Tensor> copies_of(const std::vector<Tensor>& params) {
  std::vector<Tensor> out;
  for (const Tensor& p : params) out.push_back(Tensor::from_vector(p.to_vector(), p.shape(), p.dtype()));
  return out;
}

// `n` steps written out with one slip (the update as exercise 17 writes it, in double on the
// parameters' values), to recognise a learner's train_step that makes it.
static std::vector<StepRecord> steps_with(const StepCase& c, StepSlip slip, int64_t n) {
  const TrainStepConfig config = step_config();
  const ScheduleOptions schedule = step_schedule(config);
  auto model = tiny_gpt(c.dtype, 221);
  model->train();
  std::vector<Tensor> params = model->parameters();
  std::vector<std::vector<double>> m, v;
  for (const Tensor& p : params) {
    m.emplace_back(static_cast<size_t>(p.numel()), 0.0);
    v.emplace_back(static_cast<size_t>(p.numel()), 0.0);
  }
  std::vector<StepRecord> records;
  for (int64_t step = 0; step < n; ++step) {
    if (slip != StepSlip::grads_not_zeroed) model->zero_grad();
    Tensor loss = model->loss(step_ids(230, step), step_ids(240, step));
    loss.backward();
    std::vector<std::vector<double>> g;
    double squares = 0;
    for (const Tensor& p : params) {
      g.push_back(p.grad().to_vector());
      for (double x : g.back()) squares += x * x;
    }
    const double norm = std::sqrt(squares), scale = config.max_norm / (norm + 1e-6);
    if (slip != StepSlip::not_clipped && scale < 1.0)
      for (auto& gi : g)
        for (double& x : gi) x *= scale;
    const double lr = lr_at(schedule, slip == StepSlip::lr_one_early ? step + 1 : step);
    double used = lr;
    if (slip == StepSlip::config_lr) used = config.adamw.lr;
    if (slip == StepSlip::lr_one_late) used = step == 0 ? config.adamw.lr : lr_at(schedule, step - 1);
    const AdamWConfig& a = config.adamw;
    const double bc1 = 1.0 - std::pow(a.beta1, static_cast<double>(step + 1));
    const double bc2 = 1.0 - std::pow(a.beta2, static_cast<double>(step + 1));
    for (size_t i = 0; i < params.size(); ++i) {
      const double wd = params[i].dim() >= 2 || slip == StepSlip::decay_everything ? a.weight_decay : 0.0;
      std::vector<double> p = params[i].to_vector();
      for (size_t j = 0; j < p.size(); ++j) {
        p[j] *= 1.0 - used * wd;
        m[i][j] = a.beta1 * m[i][j] + (1.0 - a.beta1) * g[i][j];
        v[i][j] = a.beta2 * v[i][j] + (1.0 - a.beta2) * g[i][j] * g[i][j];
        p[j] -= used / bc1 * m[i][j] / (std::sqrt(v[i][j]) / std::sqrt(bc2) + a.eps);
      }
      set_values(params[i], p);
    }
    records.push_back({loss.item(), norm, lr, copies_of(params)});
  }
  return records;
}

// `problem` with the slip whose steps the learner's `seen` steps match exactly, if one does.
static std::string step_diagnosis(const std::string& problem, const StepCase& c, const std::vector<StepRecord>& seen) {
  const std::pair<StepSlip, std::string> slips[] = {
      {StepSlip::grads_not_zeroed, tr("the gradients are not zeroed before the backward, so they pile up across steps",
                                      "反向传播之前没有把梯度清零，梯度在各步之间累加")},
      {StepSlip::not_clipped, tr("the update uses unclipped gradients (no clipping, or clipping after the update)",
                                 "更新用的是未裁剪的梯度（没有裁剪，或者在更新之后才裁剪）")},
      {StepSlip::config_lr, tr("the update uses config.adamw.lr instead of the schedule's rate",
                               "更新用的是 config.adamw.lr，而不是调度给出的学习率")},
      {StepSlip::lr_one_late, tr("the schedule's rate is applied one step late (each update uses the previous "
                                 "step's rate, the first config.adamw.lr)",
                                 "调度的学习率晚了一步才生效（每次更新用的是上一步的学习率，第一步用的是 "
                                 "config.adamw.lr）")},
      {StepSlip::lr_one_early, tr("state.step is advanced before the schedule is read (each step uses the next "
                                  "step's rate)",
                                  "在读取调度之前就推进了 state.step（每一步用的是下一步的学习率）")},
      {StepSlip::decay_everything, tr("weight decay is applied to every parameter, biases and LayerNorm weights too "
                                      "(the contract: only dim() >= 2)",
                                      "对每个参数都做了权重衰减，包括偏置和 LayerNorm 的权重（约定是只对 dim() >= 2 "
                                      "的参数）")}};
  for (const auto& [slip, what] : slips) {
    const std::vector<StepRecord> want = steps_with(c, slip, static_cast<int64_t>(seen.size()));
    bool same = true;
    for (size_t s = 0; s < seen.size() && same; ++s) {
      same = compare(want[s].loss, seen[s].loss, c.atol, c.rtol).empty() &&
             compare(want[s].grad_norm, seen[s].grad_norm, c.atol, c.rtol).empty() &&
             compare(want[s].lr, seen[s].lr, 1e-12, 1e-9).empty();
      for (size_t i = 0; i < want[s].params.size() && same; ++i)
        same = compare(want[s].params[i], seen[s].params[i], c.atol, c.rtol).empty();
    }
    if (same) return with_cause(problem, what);
  }
  return problem;
}

// Three steps of the learner's train_step against the framework's loop on an identical model.
static std::string compare_steps(const StepCase& c) {
  const TrainStepConfig config = step_config();
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
  const ScheduleOptions schedule = step_schedule(config);
  TrainState state;
  std::vector<StepRecord> seen;  // what the learner's steps returned and left
  // A failure, with the likely mistake when the learner's steps match one exactly. The learner's
  // remaining steps run first: two mistakes can agree on the first steps (a rate applied one step
  // late and config.adamw.lr differ only from step 1 on).
  auto fail = [&](const std::string& problem) {
    for (int64_t step = static_cast<int64_t>(seen.size()); step < 3; ++step) {
      try {
        StepResult got = train_step(*mine, step_ids(230, step), step_ids(240, step), state, config);
        seen.push_back({got.loss, got.grad_norm, got.lr, copies_of(mine->parameters())});
      } catch (const std::exception&) { break; }
    }
    return step_diagnosis(problem, c, seen);
  };
  for (int64_t step = 0; step < 3; ++step) {
    const IntTensor x = step_ids(230, step), y = step_ids(240, step);
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
    seen.push_back({got.loss, got.grad_norm, got.lr, copies_of(mine->parameters())});
    const std::string at = tr("step ", "第 ") + std::to_string(step + 1) + tr(" of 3: ", " 步（共 3 步）：");
    std::string d = compare(loss.item(), got.loss, c.atol, c.rtol);
    if (!d.empty()) return fail(at + tr("loss ", "损失 ") + d);
    d = compare(norm, got.grad_norm, c.atol, c.rtol);
    if (!d.empty()) return fail(at + tr("grad_norm (before clipping) ", "grad_norm（裁剪之前）") + d);
    if (norm <= config.max_norm)
      return at + tr("internal: this check's gradients should need clipping", "内部错误：这项检查的梯度本应需要裁剪");
    d = compare(lr_at(schedule, step), got.lr, 1e-12, 1e-9);
    if (!d.empty()) return fail(at + "lr " + d);
    if (state.step != step + 1)
      return at + tr("state.step is ", "这一步之后 state.step 是 ") + std::to_string(state.step) +
             tr(" after the step, expected ", "，应为 ") + std::to_string(step + 1);
    auto want = ref->named_parameters();
    auto have = mine->named_parameters();
    for (size_t i = 0; i < want.size(); ++i) {
      d = compare(want[i].second, have[i].second, c.atol, c.rtol);
      if (!d.empty()) return fail(at + tr("after the update, ", "更新之后，") + want[i].first + " " + d);
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
          return tr("state.m has ", "state.m 有 ") + std::to_string(state.m.size()) +
                 tr(" and state.v ", " 个向量，state.v 有 ") + std::to_string(state.v.size()) +
                 tr(" vectors, expected one per parameter (", " 个，应为每个参数一个（") +
                 std::to_string(params.size()) + tr(")", " 个）");
        for (size_t i = 0; i < params.size(); ++i)
          if (static_cast<int64_t>(state.m[i].size()) != params[i].numel())
            return "state.m[" + std::to_string(i) + tr("] has ", "] 有 ") + std::to_string(state.m[i].size()) +
                   tr(" values, expected ", " 个值，应为 ") + std::to_string(params[i].numel());
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

namespace {
enum class DrawSlip { temperature_ignored, top_k_plus_one, top_k_minus_one, top_k_ignored, top_p_short, top_p_ignored };
}  // namespace

static SampleOptions options_of(const SamplingConfig& s) {
  SampleOptions o;
  o.temperature = s.temperature;
  o.top_k = s.top_k;
  o.top_p = s.top_p;
  return o;
}

// How many tokens top_p keeps when it stops before the token that carries the mass past top_p:
// the longest prefix whose mass stays below top_p of the total (at least one token).
static int64_t top_p_kept_short(const std::vector<double>& z, const SampleOptions& o) {
  std::vector<int64_t> order(z.size());
  for (size_t i = 0; i < z.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return z[a] > z[b]; });
  const size_t keep = o.top_k > 0 ? std::min(order.size(), static_cast<size_t>(o.top_k)) : order.size();
  std::vector<double> p(keep);
  double total = 0;
  for (size_t i = 0; i < keep; ++i) total += (p[i] = std::exp((z[order[i]] - z[order[0]]) / o.temperature));
  double mass = 0;
  size_t n = 0;
  while (n < keep && mass + p[n] < o.top_p * total) mass += p[n++];
  return static_cast<int64_t>(std::max<size_t>(n, 1));
}

// One draw as exercise 23 makes it, with one slip: to recognise a sampler that makes it. Each slip
// is a change of the options nn's sampler draws with (top_p_short: top_k cut to what it keeps).
static int64_t draw_with(const std::vector<double>& z, const SamplingConfig& s, Generator& gen, DrawSlip slip) {
  SampleOptions o = options_of(s);
  if (slip == DrawSlip::temperature_ignored && o.temperature > 0) o.temperature = 1.0;
  if (slip == DrawSlip::top_k_plus_one && o.top_k > 0) o.top_k += 1;
  if (slip == DrawSlip::top_k_minus_one && o.top_k > 1) o.top_k -= 1;
  if (slip == DrawSlip::top_k_ignored) o.top_k = 0;
  if (slip == DrawSlip::top_p_ignored) o.top_p = 1.0;
  if (slip == DrawSlip::top_p_short && o.temperature > 0 && o.top_p < 1.0) {
    o.top_k = top_p_kept_short(z, o);
    o.top_p = 1.0;
  }
  return sample_from_logits(z.data(), static_cast<int64_t>(z.size()), o, gen);
}

static std::string compare_draws(const SamplingConfig& s, uint64_t seed) {
  std::vector<double> z = sample_logits(seed);
  const SampleOptions o = options_of(s);
  Generator a(seed), b(seed);
  std::vector<int64_t> want, got;
  for (int i = 0; i < 200; ++i) {
    want.push_back(sample_from_logits(z.data(), static_cast<int64_t>(z.size()), o, a));
    got.push_back(sample_token(z, s, b));
  }
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == got[i]) continue;
    const std::string problem = tr("draw ", "第 ") + std::to_string(i) + tr(": expected token ", " 次抽样：应为词元 ") +
                                std::to_string(want[i]) + tr(", got ", "，得到 ") + std::to_string(got[i]);
    const std::pair<DrawSlip, std::string> slips[] = {
        {DrawSlip::temperature_ignored,
         tr("the temperature is ignored, or applied after the softmax (probabilities divided by it are the same "
            "once renormalised): divide the logits by it",
            "温度被忽略了，或者用在了 softmax 之后（概率除以温度再归一化，结果不变）：应该用 logits 除以温度")},
        {DrawSlip::top_k_plus_one, tr("top_k keeps k + 1 tokens", "top_k 保留了 k + 1 个词元")},
        {DrawSlip::top_k_minus_one, tr("top_k keeps k - 1 tokens", "top_k 只保留了 k - 1 个词元")},
        {DrawSlip::top_k_ignored, tr("top_k is ignored (every token stays)", "top_k 被忽略了（所有词元都保留）")},
        {DrawSlip::top_p_short, tr("top_p leaves out the token whose probability carries the kept mass past top_p "
                                   "(it must be kept: add while the sum is still below top_p)",
                                   "top_p 漏掉了让累计概率越过 top_p 的那个词元（它必须保留：只要累计和还小于 top_p "
                                   "就继续加）")},
        {DrawSlip::top_p_ignored, tr("top_p is ignored", "top_p 被忽略了")}};
    for (const auto& [slip, what] : slips) {
      Generator g(seed);
      bool same = true;
      for (size_t j = 0; j < got.size() && same; ++j) same = draw_with(z, s, g, slip) == got[j];
      if (same) return with_cause(problem, what);
    }
    return problem;
  }
  return std::string();
}

// generate() feeding each new token without the cache: the model sees it alone at position 0.
static std::vector<int32_t> generate_forgetting(GPT& model, const std::vector<int32_t>& prompt, int64_t n,
                                                const SampleOptions& o, Generator& gen) {
  NoGradGuard no_grad;
  const int64_t block = model.config().block_size, V = model.config().vocab_size;
  std::vector<int32_t> seq = prompt;
  const size_t first = prompt.size() > static_cast<size_t>(block) ? prompt.size() - static_cast<size_t>(block) : 0;
  std::vector<int32_t> next(prompt.begin() + static_cast<std::ptrdiff_t>(first), prompt.end());
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> all = model.forward(IntTensor({1, static_cast<int64_t>(next.size())}, next)).to_vector();
    const int32_t token = sample_from_logits(all.data() + all.size() - static_cast<size_t>(V), V, o, gen);
    seq.push_back(token);
    next = {token};
  }
  return seq;
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
    return tr("returned ", "返回了 ") + std::to_string(got.size()) + tr(" tokens, expected ", " 个词元，应为 ") +
           std::to_string(want.size()) + tr(" (the prompt, then the new ones)", " 个（提示词，然后是新生成的）");
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i]) {
      const std::string problem = tr("token ", "第 ") + std::to_string(i) + tr(": expected ", " 个词元：应为 ") +
                                  std::to_string(want[i]) + tr(", got ", "，得到 ") + std::to_string(got[i]);
      Generator g(seed);
      if (generate_forgetting(*model, prompt, n, o, g) == got)
        return with_cause(problem, tr("each new token is fed without the cache, so the model sees it alone at "
                                      "position 0 (pass the cache to gpt_forward, which appends to it)",
                                      "每个新词元都没有经过缓存就送进模型，模型只看到它自己，位置还是 0（把缓存传给 "
                                      "gpt_forward，由它追加）"));
      return problem;
    }
  if (T0 + n - 1 <= block && cache.length() != T0 + n - 1)
    return tr("the cache holds ", "生成之后缓存里有 ") + std::to_string(cache.length()) +
           tr(" positions after generating, expected ", " 个位置，应为 ") + std::to_string(T0 + n - 1) +
           tr(" (the prompt and every new token but the last, each fed once); the tokens are right, so this is what "
              "you get when the whole context is fed again at every token (without the cache, or after clearing it) "
              "instead of only the newest token",
              " 个（提示词和除最后一个以外的每个新词元，各送入一次）；词元都对，所以这正是每生成一个词元都把整段上下文"
              "重新送一遍（不用缓存，或者先清空缓存）、而不是只送最新词元时的结果");
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
        if (!a.empty()) return tr("top_p 0.6: ", "top_p 0.6：") + a;
        std::string b = compare_draws({0.8, 5, 0.8}, 235);
        return b.empty() ? b : tr("top_k 5, top_p 0.8, temperature 0.8: ", "top_k 5，top_p 0.8，温度 0.8：") + b;
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
            return tr("temperature ", "温度 ") + std::to_string(s.temperature) + tr(", top_k ", "，top_k ") +
                   std::to_string(s.top_k) +
                   tr(": expected token 4 (logit 3, tied with token 9), got ",
                      "：应为词元 4（logit 3，与词元 9 并列），得到 ") +
                   std::to_string(got);
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

// check_cost.cpp: the checks of exercise 24 (attention's backward by hand, lesson attention)
// and of the cost and scale lessons' exercises 25-31: attention's cost, the entropy of attention
// weights, merging partial rows, a sliding-window mask, the KV cache's bytes, RoPE and ALiBi,
// gradient accumulation.
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "autograd/ops_attention.h"
#include "autograd/ops.h"
#include "exercises/check/checker.h"
#include "exercises/exercise.h"
#include "nn/positional.h"

namespace sf::exercise {

static const double inf = std::numeric_limits<double>::infinity();

// ---- 24 attention backward ----
static Tensor causal(const Tensor& q, const Tensor& k, const Tensor& v) {
  AttentionOptions options;
  options.causal = true;
  return sf::attention(q, k, v, options);
}

// Causal attention whose forward is the framework's and whose backward is the learner's.
static Tensor attention_op(const Tensor& q, const Tensor& k, const Tensor& v) {
  return op_with_backward(
      {q, k, v}, [](const std::vector<Tensor>& in) { return causal(in[0], in[1], in[2]); },
      [](const std::vector<Tensor>& in, const Tensor&, const Tensor& dout) {
        AttentionGrads g = attention_backward(in[0], in[1], in[2], dout);
        return std::vector<Tensor>{g.dq, g.dk, g.dv};
      },
      {"q", "k", "v"});
}

// The learner's dq, dk, dv against autograd's through the framework's attention, for dout; a
// wrong gradient is checked against the usual mistakes.
static std::string attention_grads_match(const Tensor& q0, const Tensor& k0, const Tensor& v0, const Tensor& dout,
                                         double atol, double rtol) {
  Tensor q = q0.clone().requires_grad_(), k = k0.clone().requires_grad_(), v = v0.clone().requires_grad_();
  causal(q, k, v).backward(dout);
  AttentionGrads g = attention_backward(q0, k0, v0, dout);
  for (auto [name, want, got] :
       {std::tuple{"dq", q.grad(), g.dq}, std::tuple{"dk", k.grad(), g.dk}, std::tuple{"dv", v.grad(), g.dv}}) {
    std::string d = compare(want, got, atol, rtol);
    if (d.empty()) continue;
    const double sqrt_d = std::sqrt(static_cast<double>(q0.size(3)));
    std::vector<Mistake> mistakes = {
        {"the 1/sqrt(D) of the scores is missing from this gradient (the scores are q k^T / sqrt(D))", want * sqrt_d}};
    return std::string(name) + " " + diagnose(d, got, mistakes, atol, rtol);
  }
  return "";
}

void check_attention_backward(Report& r) {
  const char* hint =
      "dv = P^T dout, dP = dout v^T, dS = P (dP - sum(dP P) per row), dq = dS k / sqrt(D), dk = dS^T q / sqrt(D)";
  r.check(
      "values of dq, dk, dv, T = S = 4, a random dout",
      [] {
        Tensor q = random_f64({1, 2, 4, 3}, 241), k = random_f64({1, 2, 4, 3}, 242), v = random_f64({1, 2, 4, 3}, 243);
        return attention_grads_match(q, k, v, random_f64({1, 2, 4, 3}, 244, 2.0), 1e-9, 1e-7);
      },
      hint);
  r.check(
      "values after 2 cached keys: T 2, S 5 (query t sits at S - T + t)",
      [] {
        Tensor q = random_f64({2, 1, 2, 3}, 245), k = random_f64({2, 1, 5, 3}, 246), v = random_f64({2, 1, 5, 3}, 247);
        return attention_grads_match(q, k, v, random_f64({2, 1, 2, 3}, 248), 1e-9, 1e-7);
      },
      "use exercise 8's mask: key s is hidden from query t when s > S - T + t; dv and dk have S rows, dq has T");
  r.check(
      "float64 gradient check of dq, dk, dv (q (1, 1, 3, 2), k and v (1, 1, 4, 2))",
      [] {
        Tensor q = random_f64({1, 1, 3, 2}, 249).requires_grad_(), k = random_f64({1, 1, 4, 2}, 250).requires_grad_(),
               v = random_f64({1, 1, 4, 2}, 251).requires_grad_();
        return gradient_check([](const std::vector<Tensor>& in) { return attention_op(in[0], in[1], in[2]); },
                              {q, k, v}, {"q", "k", "v"});
      },
      hint);
  r.check(
      "float32: q, k, v, dout float32 give float32 gradients",
      [] {
        Tensor q = random_f64({1, 1, 3, 4}, 252).to(DType::f32), k = random_f64({1, 1, 3, 4}, 253).to(DType::f32),
               v = random_f64({1, 1, 3, 4}, 254).to(DType::f32), dout = random_f64({1, 1, 3, 4}, 255).to(DType::f32);
        AttentionGrads g = attention_backward(q, k, v, dout);
        for (auto [name, t] : {std::pair{"dq", g.dq}, std::pair{"dk", g.dk}, std::pair{"dv", g.dv}}) {
          std::string d = same_dtype(t, DType::f32);
          if (!d.empty()) return std::string(name) + ": " + d;
        }
        return attention_grads_match(q, k, v, dout, 1e-5, 1e-4);
      },
      "keep the inputs' dtype: a float32 model needs float32 gradients (create any tensor with q.dtype())");
  r.check(
      "edge: large scores (q scaled by 30) keep the gradients finite",
      [] {
        Tensor q = random_f64({1, 1, 4, 2}, 256, 30.0), k = random_f64({1, 1, 4, 2}, 257),
               v = random_f64({1, 1, 4, 2}, 258);
        return attention_grads_match(q, k, v, random_f64({1, 1, 4, 2}, 259), 1e-8, 1e-6);
      },
      "recompute P with a stable softmax (sf::softmax, or the max subtracted), never from raw exponentials");
}

// ---- 25 attention cost ----
// "expected 10, got 12", exact integers in the checker's language.
static std::string counts(int64_t expected, int64_t got) {
  return tr("expected ", "应为 ") + std::to_string(expected) + tr(", got ", "，得到 ") + std::to_string(got);
}

void check_attention_cost(Report& r) {
  const char* hint =
      "attention: sum over t of 2 (t + 1) C = T (T + 1) C; linear: (3 + 1 + 8) C^2 per token = 12 T C^2; "
      "P: H T^2 numbers";
  struct Case {
    int64_t T, C, H, bytes, attention, linear, p;
  };
  // The rows of lesson attention-cost's tables (C 128, H 4, float32), and GPT-2 small at T 1024.
  const std::vector<Case> cases = {{64, 128, 4, 4, 532480, 12582912, 65536},
                                   {1024, 128, 4, 4, 134348800, 201326592, 16777216},
                                   {1024, 768, 12, 2, 806092800, 7247757312, 25165824},
                                   {1, 4, 2, 4, 8, 192, 8}};
  for (const Case& c : cases)
    r.check(
        "T " + std::to_string(c.T) + ", C " + std::to_string(c.C) + ", H " + std::to_string(c.H) + ", " +
            std::to_string(c.bytes) + " bytes per number",
        [c] {
          AttentionCost got = attention_cost(c.T, c.C, c.H, c.bytes);
          if (got.attention_macs != c.attention) {
            std::string d = "attention_macs" + tr(": ", "：") + counts(c.attention, got.attention_macs);
            if (got.attention_macs == 2 * c.T * c.T * c.C)
              d += tr("; this counts every key for every query: causal query t sees only t + 1 keys",
                      "；这把每个查询对每个键都算上了：因果注意力中查询 t 只看到 t + 1 个键");
            else if (2 * got.attention_macs == c.attention)
              d += tr("; this is half: Q K^T and P V each cost (t + 1) D per query and head",
                      "；这只有一半：Q K^T 和 P V 对每个查询、每个头各要 (t + 1) D");
            return d;
          }
          if (got.linear_macs != c.linear) {
            std::string d = "linear_macs" + tr(": ", "：") + counts(c.linear, got.linear_macs);
            if (got.linear_macs == 4 * c.T * c.C * c.C)
              d += tr("; the MLP's 4C x C and C x 4C (8 C^2) are missing", "；缺了 MLP 的 4C x C 和 C x 4C（8 C^2）");
            return d;
          }
          if (got.p_bytes != c.p) {
            std::string d = "p_bytes" + tr(": ", "：") + counts(c.p, got.p_bytes);
            if (got.p_bytes * c.H == c.p) d += tr("; P has one T x T matrix per head", "；P 每个头有一个 T x T 矩阵");
            return d;
          }
          return std::string();
        },
        hint);
  r.check(
      "out of range: H 3 does not divide C 128; T 0",
      [] {
        std::string a = refuses([] { (void)attention_cost(64, 128, 3, 4); }, tr("H 3 for C 128", "C 128 配 H 3"));
        if (!a.empty()) return a;
        return refuses([] { (void)attention_cost(0, 128, 4, 4); }, "T 0");
      },
      "throw sf::ShapeError when H does not divide C or a size is below 1");
}

// ---- 26 softmax entropy ----
static Tensor reference_entropy(const Tensor& p) {
  const int64_t N = p.size(-1), rows = p.numel() / std::max<int64_t>(1, N);
  std::vector<double> v = p.to_vector(), h(static_cast<size_t>(rows), 0.0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < N; ++j) {
      const double x = v[static_cast<size_t>(i * N + j)];
      if (x > 0) h[static_cast<size_t>(i)] -= x * std::log(x);
    }
  Shape shape = p.shape();
  shape.pop_back();
  return Tensor::from_vector(h, shape, DType::f64);
}

void check_softmax_entropy(Report& r) {
  const char* hint = "H = -sum_j p_j log p_j over the last axis, with the terms where p_j = 0 left out (0 log 0 = 0)";
  r.check(
      "values: softmax rows of random scores, (3, 5)",
      [] {
        Tensor p = sf::softmax(random_f64({3, 5}, 261));
        Tensor got = softmax_entropy(p);
        return diagnose(compare(reference_entropy(p), got), got,
                        {{"the sign is flipped: entropy is minus the sum of p log p", -reference_entropy(p)},
                         {"log2 is used: the lesson measures entropy in nats (natural log)",
                          reference_entropy(p) / std::log(2.0)}});
      },
      hint);
  r.check(
      "uniform rows give log N, one-hot rows 0 (a softmax collapsed onto one key)",
      [] {
        Tensor p = Tensor::from_vector({0.25, 0.25, 0.25, 0.25, 0, 1, 0, 0}, {2, 4}, DType::f64);
        return compare(reference_entropy(p), softmax_entropy(p), 1e-12, 1e-12);
      },
      "a one-hot row has p = 0 entries: p log p is 0 there by its limit, but 0 * log 0 computes 0 * -inf = nan");
  r.check(
      "(2, 3, 4): one entropy per row, shape (2, 3)",
      [] {
        Tensor p = sf::softmax(random_f64({2, 3, 4}, 262, 3.0));
        return compare(reference_entropy(p), softmax_entropy(p));
      },
      "sum over the last axis only (sf::sum(t, -1)): the result has one value per row");
  r.check(
      "float32: p float32 gives a float32 entropy",
      [] {
        Tensor p = sf::softmax(random_f64({2, 6}, 263)).to(DType::f32);
        Tensor got = softmax_entropy(p);
        std::string d = same_dtype(got, DType::f32);
        return d.empty() ? compare(reference_entropy(p), got, 1e-5, 1e-5) : d;
      },
      "build the tensors you need from p with sf ops, which keep its dtype");
}

// ---- 27 merging partial rows ----
// The partial row of query scores `x` over values `v` (one vector of D per key).
static PartialRow partial(const std::vector<double>& x, const std::vector<std::vector<double>>& v, size_t from,
                          size_t to) {
  PartialRow p;
  if (from == to) return p;
  for (size_t s = from; s < to; ++s) p.max = std::max(p.max, x[s]);
  p.out.assign(v[0].size(), 0.0);
  for (size_t s = from; s < to; ++s) {
    const double e = std::exp(x[s] - p.max);
    p.sum += e;
    for (size_t d = 0; d < p.out.size(); ++d) p.out[d] += e * v[s][d];
  }
  return p;
}

// "" when merged holds the attention output softmax(x) v (and the row's max and sum).
static std::string row_matches(const PartialRow& merged, const std::vector<double>& x,
                               const std::vector<std::vector<double>>& v) {
  PartialRow whole = partial(x, v, 0, x.size());
  std::string m = compare(whole.max, merged.max, 0, 0);
  if (!m.empty()) return "max: " + m;
  std::string s = compare(whole.sum, merged.sum, 1e-12, 1e-12);
  if (!s.empty()) return "sum: " + s;
  std::vector<double> want, got;
  for (size_t d = 0; d < whole.out.size(); ++d) want.push_back(whole.out[d] / whole.sum);
  for (size_t d = 0; d < merged.out.size(); ++d) got.push_back(merged.out[d] / merged.sum);
  std::string o = compare(want, got, 1e-12, 1e-10);
  return o.empty() ? o : tr("out / sum (the attention output): ", "out / sum（注意力的输出）：") + o;
}

void check_partial_rows(Report& r) {
  const char* hint =
      "m = max(m_a, m_b); each side is rescaled by e^(its max - m), the sum and every out value alike: "
      "out = out_a e^(m_a - m) + out_b e^(m_b - m)";
  const std::vector<double> x = random_f64({7}, 271, 2.0).to_vector();
  std::vector<std::vector<double>> v;
  for (int s = 0; s < 7; ++s) v.push_back(random_f64({3}, 272 + static_cast<uint64_t>(s)).to_vector());
  r.check(
      "two tiles (3 and 4 keys) merge into the whole row's attention output",
      [=] { return row_matches(merge_partial_rows(partial(x, v, 0, 3), partial(x, v, 3, 7)), x, v); }, hint);
  r.check(
      "the tile with the larger max second, then first",
      [=] {
        std::vector<double> y = {0.5, -1.0, 4.0, 3.5};
        std::vector<std::vector<double>> w = {{1, 0}, {0, 1}, {2, 2}, {-1, 3}};
        std::string a = row_matches(merge_partial_rows(partial(y, w, 0, 2), partial(y, w, 2, 4)), y, w);
        if (!a.empty()) return tr("larger max second: ", "最大值较大的在后：") + a;
        std::vector<double> z = {4.0, 3.5, 0.5, -1.0};
        std::vector<std::vector<double>> u = {{2, 2}, {-1, 3}, {1, 0}, {0, 1}};
        std::string b = row_matches(merge_partial_rows(partial(z, u, 0, 2), partial(z, u, 2, 4)), z, u);
        return b.empty() ? b : tr("larger max first: ", "最大值较大的在前：") + b;
      },
      "out was summed relative to its own tile's max, like sum: rescale it by the same factor e^(m_tile - m)");
  r.check(
      "three tiles merged left to right (2, 2 and 3 keys)",
      [=] {
        PartialRow ab = merge_partial_rows(partial(x, v, 0, 2), partial(x, v, 2, 4));
        return row_matches(merge_partial_rows(ab, partial(x, v, 4, 7)), x, v);
      },
      "a merged row is a partial row like any other: merging is associative");
  r.check(
      "edge: large scores (1000 and 1003) stay finite",
      [] {
        std::vector<double> y = {1000.0, 1003.0, 999.0};
        std::vector<std::vector<double>> w = {{1, 2}, {3, 4}, {5, 6}};
        return row_matches(merge_partial_rows(partial(y, w, 0, 1), partial(y, w, 1, 3)), y, w);
      },
      "exponentiate only differences to the max, never a raw score");
  r.check(
      "edge: merging with an empty row returns the other; two empty rows stay empty",
      [=] {
        PartialRow a = partial(x, v, 0, 7);
        std::string l = row_matches(merge_partial_rows(PartialRow{}, a), x, v);
        if (!l.empty()) return tr("empty + row: ", "空 + 行：") + l;
        std::string rr = row_matches(merge_partial_rows(a, PartialRow{}), x, v);
        if (!rr.empty()) return tr("row + empty: ", "行 + 空：") + rr;
        PartialRow e = merge_partial_rows(PartialRow{}, PartialRow{});
        if (e.max != -inf || e.sum != 0.0 || !e.out.empty())
          return tr("empty + empty: expected max -inf, sum 0, out empty", "空 + 空：应为 max -inf、sum 0、out 为空");
        return std::string();
      },
      "an empty row has max -inf: e^(-inf - (-inf)) is nan, so return the other row as it is");
  r.check(
      "out of range: outputs of 2 and 3 values are refused",
      [] {
        PartialRow a{0.0, 1.0, {1.0, 2.0}}, b{1.0, 1.0, {1.0, 2.0, 3.0}};
        return refuses([&] { (void)merge_partial_rows(a, b); },
                       tr("merging out of 2 and 3 values", "合并 2 个值和 3 个值的 out"));
      },
      "the two rows must hold outputs of the same size D: throw sf::ShapeError naming both sizes");
}

// ---- 28 sliding-window mask ----
// The framework's rule (AttentionMask::visible_keys) as a (T, S) 0/1 mask, 1 = hidden.
static Tensor reference_window_mask(int64_t T, int64_t S, int64_t W) {
  AttentionMask mask;
  mask.causal = true;
  mask.window = W;
  std::vector<double> m(static_cast<size_t>(T * S), 1.0);
  for (int64_t t = 0; t < T; ++t) {
    AttentionMask::KeyRange range = mask.visible_keys(t, T, S);
    for (int64_t s = range.first; s < range.end; ++s) m[static_cast<size_t>(t * S + s)] = 0.0;
  }
  return Tensor::from_vector(m, {T, S}, DType::f64);
}

void check_sliding_window(Report& r) {
  const char* hint = "query t at p = S - T + t sees keys s with p - W < s <= p: exactly W keys once p >= W - 1";
  struct Case {
    int64_t T, S, W;
    std::string hint;
  };
  for (Case c :
       {Case{6, 6, 3, hint}, Case{1, 8, 4, "a decoding step (T 1) is at position S - 1: it sees keys S - W .. S - 1"},
        Case{3, 7, 2, "after a cache, query t sits at S - T + t, not at t"},
        Case{4, 4, 10, "a window wider than the sequence is the plain causal mask"},
        Case{5, 5, 1, "W = 1: each query sees only itself (the diagonal)"}})
    r.check(
        "T " + std::to_string(c.T) + ", S " + std::to_string(c.S) + ", W " + std::to_string(c.W),
        [c] {
          Tensor got = sliding_window_mask(c.T, c.S, c.W);
          std::string d = compare(reference_window_mask(c.T, c.S, c.W), got, 0, 0);
          return diagnose(d, got,
                          {{"the window holds W + 1 keys: it is the last W keys including the query's own",
                            reference_window_mask(c.T, c.S, c.W + 1)},
                           {"the window holds W - 1 keys: it is the last W keys including the query's own",
                            c.W > 1 ? reference_window_mask(c.T, c.S, c.W - 1) : Tensor()}},
                          0, 0);
        },
        c.hint);
  r.check(
      "the mask in attention: sf::attention with your mask equals its window option",
      [] {
        Tensor q = random_f64({1, 1, 5, 2}, 281), k = random_f64({1, 1, 5, 2}, 282), v = random_f64({1, 1, 5, 2}, 283);
        AttentionOptions windowed;
        windowed.causal = true;
        windowed.window = 2;
        Tensor mask = sliding_window_mask(5, 5, 2);
        if (!mask.defined() || mask.shape() != Shape{5, 5})
          return tr("the mask is not (5, 5)", "掩码的形状不是 (5, 5)");
        Tensor scores = matmul(q, transpose(k, -2, -1)) / std::sqrt(2.0);
        Tensor mine = matmul(
            sf::softmax(masked_fill(scores, reshape(mask, {1, 1, 5, 5}), -std::numeric_limits<double>::infinity())), v);
        return compare(sf::attention(q, k, v, windowed), mine, 1e-12, 1e-10);
      },
      "1 marks a hidden key, 0 a visible one");
  r.check(
      "out of range: W 0 and S < T are refused",
      [] {
        std::string a = refuses([] { (void)sliding_window_mask(3, 3, 0); }, "W 0");
        if (!a.empty()) return a;
        return refuses([] { (void)sliding_window_mask(4, 3, 2); },
                       tr("T 4 queries with S 3 keys", "4 个查询配 3 个键"));
      },
      "a window of no keys and more queries than keys have no meaning: throw sf::ShapeError naming them");
}

// ---- 29 KV-cache bytes per token ----
void check_kv_cache_bytes(Report& r) {
  const char* hint = "2 (a key and a value) x n_layer x n_kv_head x D x bytes_per_number";
  struct Case {
    std::string name;
    int64_t L, H, H_kv, D, bytes, expected;
  };
  // GPT-2 small (12 layers, 12 heads of 64), fp16; its GQA and MQA variants; a fp32 cache.
  const std::vector<Case> cases = {{"MHA, GPT-2 small in fp16 (12 layers, 12 heads of 64)", 12, 12, 12, 64, 2, 36864},
                                   {"GQA, 4 key/value heads for 12 query heads", 12, 12, 4, 64, 2, 12288},
                                   {"MQA, 1 key/value head", 12, 12, 1, 64, 2, 3072},
                                   {"fp32, 4 layers, 8 heads of 32", 4, 8, 8, 32, 4, 8192}};
  for (const Case& c : cases)
    r.check(
        c.name,
        [c] {
          int64_t got = kv_cache_bytes_per_token(c.L, c.H, c.H_kv, c.D, c.bytes);
          if (got == c.expected) return std::string();
          std::string d = tr("expected ", "应为 ") + std::to_string(c.expected) + tr(" bytes, got ", " 字节，得到 ") +
                          std::to_string(got);
          if (got * 2 == c.expected)
            d += tr("; this is half: a token stores a key and a value", "；这只有一半：每个词元要存一个键和一个值");
          if (got == c.expected / c.H_kv * c.H && c.H != c.H_kv)
            d += tr("; this counts n_head key/value heads: the cache holds only n_kv_head",
                    "；这按 n_head 个键/值头算了：缓存里只有 n_kv_head 个");
          if (got * c.bytes == c.expected)
            d += tr("; this counts numbers, not bytes", "；这数的是数的个数，不是字节数");
          return d;
        },
        hint);
  r.check(
      "out of range: n_kv_head 5 does not divide n_head 12; n_layer 0",
      [] {
        std::string a = refuses([] { (void)kv_cache_bytes_per_token(12, 12, 5, 64, 2); },
                                tr("n_kv_head 5 for n_head 12", "n_head 12 配 n_kv_head 5"));
        if (!a.empty()) return a;
        return refuses([] { (void)kv_cache_bytes_per_token(0, 12, 12, 64, 2); }, "n_layer 0");
      },
      "query heads are shared out in equal groups, so n_kv_head must divide n_head: throw sf::ShapeError");
}

// ---- 30 RoPE and ALiBi ----
void check_rope_alibi(Report& r) {
  r.check(
      "rope_rotate against sf::rope, x (1, 2, 3, 4) at offset 0",
      [] {
        Tensor x = random_f64({1, 2, 3, 4}, 301);
        return compare(sf::rope(x, 0), rope_rotate(x, 0));
      },
      "pair i is (x[i], x[i + D/2]): y[i] = x[i] cos - x[i + D/2] sin, y[i + D/2] = x[i + D/2] cos + x[i] sin, "
      "angle p 10000^(-2i/D)");
  r.check(
      "rope_rotate at offset 5, D 6",
      [] {
        Tensor x = random_f64({2, 1, 2, 6}, 302);
        Tensor got = rope_rotate(x, 5);
        return diagnose(compare(sf::rope(x, 5), got), got,
                        {{"the offset is ignored: row t is position offset + t", sf::rope(x, 0)}});
      },
      "row t is position offset + t");
  r.check(
      "the point of RoPE: q . k after rotation depends only on the distance (positions 3, 1 and 10, 8)",
      [] {
        Tensor q = random_f64({1, 1, 1, 4}, 303), k = random_f64({1, 1, 1, 4}, 304);
        auto dot = [](const Tensor& a, const Tensor& b) { return sf::sum(a * b).item(); };
        double near = dot(rope_rotate(q, 3), rope_rotate(k, 1)), far = dot(rope_rotate(q, 10), rope_rotate(k, 8));
        return compare(near, far, 1e-12, 1e-10);
      },
      "rotate q and k by their own positions' angles: the rotations then cancel except for the difference");
  r.check(
      "float32: rope_rotate keeps float32; an odd D is refused",
      [] {
        Tensor x = random_f64({1, 1, 2, 4}, 305).to(DType::f32);
        Tensor got = rope_rotate(x, 2);
        std::string d = same_dtype(got, DType::f32);
        if (!d.empty()) return d;
        std::string v = compare(sf::rope(x, 2), got, 1e-6, 1e-5);
        if (!v.empty()) return v;
        Tensor odd = random_f64({1, 1, 2, 5}, 306);
        return refuses([&] { (void)rope_rotate(odd, 0); }, "D 5");
      },
      "build cos and sin with x's dtype; D must be even (pairs), else throw sf::ShapeError");
  r.check(
      "alibi_score_bias against the framework's, H 4, T 3 after 2 cached keys (S 5)",
      [] {
        std::vector<double> slopes = alibi_slopes(4);
        Tensor got = alibi_score_bias(slopes, 3, 5);
        Tensor want = alibi_bias(slopes, 3, 5, DType::f64);
        std::vector<double> wrong;  // the offset forgotten: query t at t
        for (int64_t h = 0; h < 4; ++h)
          for (int64_t t = 0; t < 3; ++t)
            for (int64_t s = 0; s < 5; ++s)
              wrong.push_back(-slopes[static_cast<size_t>(h)] * std::abs(static_cast<double>(t - s)));
        return diagnose(compare(want, got, 1e-12, 1e-12), got,
                        {{"the bias ignores the cache offset: query t sits at position S - T + t, not t",
                          Tensor::from_vector(wrong, {1, 4, 3, 5}, DType::f64)},
                         {"the sign is flipped: ALiBi subtracts slope x distance", -want}},
                        1e-12, 1e-12);
      },
      "bias[0, h, t, s] = -slopes[h] |S - T + t - s|");
  r.check(
      "out of range: T 4 queries for S 3 keys is refused",
      [] { return refuses([] { (void)alibi_score_bias({0.5}, 4, 3); }, tr("T 4 with S 3", "T 4 配 S 3")); },
      "queries are the last T of the S keys, so S >= T: throw sf::ShapeError");
}

// ---- 31 gradient accumulation ----
// A linear model y = x . w with squared error, rows (x_i, y_i): the gradient of the mean loss
// over rows [from, to), by autograd.
static std::vector<double> mean_loss_gradient(const Tensor& X, const Tensor& Y, const Tensor& w0, int64_t from,
                                              int64_t to) {
  Tensor w = w0.clone().requires_grad_();
  Tensor err = matmul(slice(X, 0, from, to), w) - slice(Y, 0, from, to);
  sf::mean(err * err).backward();
  return w.grad().to_vector();
}

void check_grad_accumulation(Report& r) {
  const char* hint =
      "each micro-batch gradient times its rows is the sum of its rows' gradients: g = sum_k rows_k g_k / sum_k rows_k";
  Tensor X = random_f64({8, 3}, 311), Y = random_f64({8, 1}, 312), w = random_f64({3, 1}, 313);
  auto split = [=](const std::vector<int64_t>& sizes) {
    std::vector<std::vector<double>> grads;
    int64_t at = 0;
    for (int64_t n : sizes) {
      grads.push_back(mean_loss_gradient(X, Y, w, at, at + n));
      at += n;
    }
    std::vector<double> got = accumulate_gradients(grads, sizes);
    std::string d = compare(mean_loss_gradient(X, Y, w, 0, 8), got, 1e-12, 1e-10);
    if (d.empty()) return d;
    std::vector<double> plain(grads[0].size(), 0.0), summed(grads[0].size(), 0.0);
    for (const auto& g : grads)
      for (size_t i = 0; i < g.size(); ++i) {
        plain[i] += g[i] / static_cast<double>(grads.size());
        summed[i] += g[i];
      }
    if (compare(plain, got, 1e-12, 1e-10).empty() && sizes.size() > 1)
      d += tr(
          "; this is the plain mean of the micro-batch gradients, right only when every micro-batch has as many rows",
          "；这是各微批次梯度的简单平均，只有每个微批次行数相同时才对");
    else if (compare(summed, got, 1e-12, 1e-10).empty())
      d += tr("; this is their sum: the update would be as many times too large as there are micro-batches",
              "；这是它们的和：更新会大出微批次个数那么多倍");
    return d;
  };
  r.check(
      "two equal micro-batches (4 + 4 rows) give the batch of 8's gradient",
      [=] {
        return split({4, 4});
      },
      hint);
  r.check(
      "unequal micro-batches (3 + 5 rows)",
      [=] {
        return split({3, 5});
      },
      "with unequal sizes the plain mean weights the rows of the small micro-batch more: weight each by its rows");
  r.check(
      "four micro-batches (1 + 2 + 2 + 3 rows), and one micro-batch of all 8",
      [=] {
        std::string a = split({1, 2, 2, 3});
        return a.empty() ? split({8}) : a;
      },
      hint);
  r.check(
      "out of range: 2 gradients with 1 row count; a micro-batch of 0 rows",
      [] {
        std::vector<std::vector<double>> g = {{1.0, 2.0}, {3.0, 4.0}};
        std::string a = refuses([&] { (void)accumulate_gradients(g, {2}); },
                                tr("2 gradients with 1 row count", "2 个梯度只配 1 个行数"));
        if (!a.empty()) return a;
        return refuses([&] { (void)accumulate_gradients(g, {2, 0}); }, tr("a micro-batch of 0 rows", "0 行的微批次"));
      },
      "throw sf::ShapeError when the counts do not match or a micro-batch has no rows");
}

}  // namespace sf::exercise

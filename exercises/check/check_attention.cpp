// check_attention.cpp: the checks of exercises 5-10 (lessons 5 attention, 7 multihead and 21 online-softmax): softmax forward and
// backward, cross-entropy, causal attention, the online softmax, splitting and merging heads.
#include <cmath>
#include <limits>

#include "autograd/ops.h"
#include "autograd/ops_attention.h"
#include "exercises/check/checker.h"
#include "exercises/exercise.h"
#include "nn/attention.h"

namespace sf::exercise {

static const double inf = std::numeric_limits<double>::infinity();

static Tensor f64(const std::vector<double>& values, const Shape& shape) {
  return Tensor::from_vector(values, shape, DType::f64);
}

// ---- 05 softmax forward ----
void check_softmax_forward(Report& r) {
  const char* hint =
      "y = e^(x - m) / sum_j e^(x_j - m) with m the row max (max(x, -1, keepdim)), sums over axis -1 with keepdim";
  r.check(
      "values on (3, 5)",
      [] {
        Tensor x = random_f64({3, 5}, 21);
        return compare(sf::softmax(x), softmax_forward(x));
      },
      hint);
  r.check(
      "values on (2, 3, 4): over the last axis only",
      [] {
        Tensor x = random_f64({2, 3, 4}, 22);
        return compare(sf::softmax(x), softmax_forward(x));
      },
      "reduce over the last axis (-1) with keepdim, so the row sums broadcast back over the row");
  r.check(
      "edge: large logits (1000, 1001, 1002) and (-1000, 0, 1000)",
      [] {
        Tensor x = f64({1000, 1001, 1002, -1000, 0, 1000}, {2, 3});
        return compare(sf::softmax(x), softmax_forward(x));
      },
      "e^1000 overflows to inf and inf/inf is nan: subtract the row max first, then the largest exponent is e^0 = 1");
  r.check(
      "edge: masked entries (-inf) get probability 0",
      [] {
        Tensor x = f64({0.5, -inf, 1.5, -inf, -inf, 2.0}, {2, 3});
        return compare(sf::softmax(x), softmax_forward(x));
      },
      "e^(-inf - m) is 0: a -inf score simply drops out, as long as the row max is finite");
  r.check(
      "edge: a row of one, shape (1, 1)",
      [] {
        Tensor x = f64({3.0}, {1, 1});
        return compare(sf::softmax(x), softmax_forward(x));
      },
      "a single score always gets probability 1");
  r.check(
      "edge: a fully masked row (every score -inf) gives zeros, not nan",
      [] {
        Tensor x = f64({-inf, -inf, -inf, 0.5, -inf, 1.0}, {2, 3});
        Tensor want = f64({0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, {2, 3});
        std::vector<double> p = sf::softmax(slice(x, 0, 1, 2)).to_vector();
        for (size_t j = 0; j < 3; ++j) want.data<double>()[3 + j] = p[j];
        return compare(want, softmax_forward(x));
      },
      "the row max is -inf there and -inf - (-inf) is nan: treat such a row's max as 0 (its exponentials are "
      "then all 0) and divide by a sum that is never 0, so the row comes out as zeros, as sf::softmax does");
  r.check(
      "float32: x float32 (3, 4) gives float32 probabilities",
      [] {
        Tensor x = random_f64({3, 4}, 23).to(DType::f32);
        Tensor got = softmax_forward(x);
        std::string d = same_dtype(got, DType::f32);
        return d.empty() ? compare(sf::softmax(x), got, 1e-6, 1e-5) : d;
      },
      "build every tensor from x with sf ops, which keep x's dtype");
}

// ---- 06 softmax backward ----
static Tensor softmax_op(const Tensor& x) {
  return op_with_backward(
      {x}, [](const std::vector<Tensor>& in) { return sf::softmax(in[0]); },
      [](const std::vector<Tensor>&, const Tensor& y, const Tensor& dy) {
        return std::vector<Tensor>{softmax_backward(y, dy)};
      },
      {"x"});
}

// d softmax(x) . dy / dx by the framework's own backward.
static Tensor reference_softmax_grad(const Tensor& x_value, const Tensor& dy) {
  Tensor x = x_value.clone().requires_grad_();
  sf::softmax(x).backward(dy);
  return x.grad();
}

void check_softmax_backward(Report& r) {
  const char* hint =
      "dx_i = y_i (dy_i - sum_j dy_j y_j): the Jacobian is diag(y) - y y^T; the sum is over the "
      "last axis with keepdim";
  r.check(
      "values on (3, 4) against the framework's backward",
      [] {
        Tensor x = random_f64({3, 4}, 31), dy = random_f64({3, 4}, 32);
        Tensor y = sf::softmax(x), got = softmax_backward(y, dy);
        return diagnose(
            compare(reference_softmax_grad(x, dy), got), got,
            {{"only the Jacobian's diagonal y_i (1 - y_i) is used: the off-diagonal -y_i y_j terms are missing",
              dy * y * (1.0 - y)},
             {"the sum_j dy_j y_j is taken as sum_j y_j (= 1), as if dy were all ones", y * (dy - 1.0)},
             {"the sum runs over the whole tensor instead of each row", y * (dy - sf::sum(dy * y))}});
      },
      hint);
  r.check(
      "float32: y and dy float32 give a float32 dx",
      [] {
        Tensor x = random_f64({2, 4}, 35).to(DType::f32), dy = random_f64({2, 4}, 36).to(DType::f32);
        Tensor got = softmax_backward(sf::softmax(x), dy);
        std::string d = same_dtype(got, DType::f32);
        return d.empty() ? compare(reference_softmax_grad(x, dy), got, 1e-6, 1e-5) : d;
      },
      "tensor ops on y and dy keep their dtype");
  r.check(
      "float64 gradient check on (2, 5)",
      [] {
        Tensor x = random_f64({2, 5}, 33).requires_grad_();
        return gradient_check([](const std::vector<Tensor>& in) { return softmax_op(in[0]); }, {x}, {"x"});
      },
      hint);
  r.check(
      "float64 gradient check on (2, 2, 3): over the last axis only",
      [] {
        Tensor x = random_f64({2, 2, 3}, 34).requires_grad_();
        return gradient_check([](const std::vector<Tensor>& in) { return softmax_op(in[0]); }, {x}, {"x"});
      },
      "sum over axis -1 with keepdim, so the sum broadcasts back over its row");
  r.check(
      "edge: masked entries (y = 0) and a row of one get zero gradient",
      [] {
        Tensor x = f64({0.5, -inf, 1.5}, {1, 3}), dy = f64({1.0, 2.0, 3.0}, {1, 3});
        std::string a = compare(reference_softmax_grad(x, dy), softmax_backward(sf::softmax(x), dy));
        if (!a.empty()) return tr("masked row: ", "被掩码的行：") + a;
        Tensor x1 = f64({4.0}, {1, 1}), dy1 = f64({5.0}, {1, 1});
        std::string b = compare(reference_softmax_grad(x1, dy1), softmax_backward(sf::softmax(x1), dy1));
        return b.empty() ? b : tr("row of one: ", "只有一个元素的行：") + b;
      },
      "write dx from y only (y_i (dy_i - sum_j dy_j y_j)): y = 0 entries then get 0, never nan");
}

// ---- 07 cross-entropy ----
static Tensor cross_entropy_op(const Tensor& logits, const IntTensor& targets) {
  return op_with_backward(
      {logits}, [targets](const std::vector<Tensor>& in) { return sf::cross_entropy(in[0], targets); },
      [targets](const std::vector<Tensor>& in, const Tensor&, const Tensor& dloss) {
        return std::vector<Tensor>{cross_entropy_backward(in[0], targets, dloss)};
      },
      {"logits"});
}

void check_cross_entropy(Report& r) {
  const char* fwd_hint =
      "log_softmax(x) = (x - m) - log(sum_j e^(x_j - m)); loss = -mean over rows of "
      "log_softmax(x)[row, target[row]]";
  const char* bwd_hint = "d loss / d logits = (softmax(logits) - onehot(targets)) / N, times dloss";
  IntTensor targets({4}, {1, 0, 4, 1});
  r.check(
      "forward values: logits (4, 5)",
      [targets] {
        Tensor logits = random_f64({4, 5}, 41);
        return compare(sf::cross_entropy(logits, targets), cross_entropy_forward(logits, targets));
      },
      fwd_hint);
  r.check(
      "backward values against the framework's backward, dloss 1",
      [targets] {
        Tensor logits = random_f64({4, 5}, 42).requires_grad_();
        sf::cross_entropy(logits, targets).backward();
        Tensor dloss = Tensor::scalar(1.0, DType::f64);
        Tensor got = cross_entropy_backward(logits.detach(), targets, dloss);
        Tensor p = sf::softmax(logits.detach()), onehot = Tensor::zeros({4, 5}, DType::f64);
        for (int64_t n = 0; n < 4; ++n) onehot.data<double>()[n * 5 + targets[n]] = 1.0;
        return diagnose(compare(logits.grad(), got), got,
                        {{"the 1/N of the mean is missing", p - onehot},
                         {"the sign is flipped: it is softmax - onehot, not onehot - softmax", (onehot - p) / 4.0}});
      },
      bwd_hint);
  r.check(
      "backward with dloss 2.5 (the loss is scaled, as under loss scaling or a weighted sum)",
      [targets] {
        Tensor logits = random_f64({4, 5}, 44).requires_grad_();
        sf::cross_entropy(logits, targets).backward(Tensor::scalar(2.5, DType::f64));
        Tensor got = cross_entropy_backward(logits.detach(), targets, Tensor::scalar(2.5, DType::f64));
        return diagnose(compare(logits.grad(), got), got,
                        {{"dloss is ignored: the gradient must be multiplied by dloss.item()", logits.grad() / 2.5}});
      },
      "the gradient arriving from above is dloss: multiply your whole result by dloss.item()");
  r.check(
      "float32: logits float32 (4, 5) give a float32 loss and gradient",
      [targets] {
        Tensor logits = random_f64({4, 5}, 45).to(DType::f32);
        Tensor loss = cross_entropy_forward(logits, targets);
        std::string d = same_dtype(loss, DType::f32);
        if (!d.empty()) return tr("forward: ", "前向：") + d;
        std::string v = compare(sf::cross_entropy(logits, targets), loss, 1e-6, 1e-5);
        if (!v.empty()) return tr("forward ", "前向") + v;
        Tensor x = logits.clone().requires_grad_();
        sf::cross_entropy(x, targets).backward();
        Tensor g = cross_entropy_backward(logits, targets, Tensor::scalar(1.0, DType::f32));
        std::string dg = same_dtype(g, DType::f32);
        if (!dg.empty()) return tr("backward: ", "反向：") + dg;
        std::string vg = compare(x.grad(), g, 1e-6, 1e-5);
        return vg.empty() ? vg : tr("backward ", "反向") + vg;
      },
      "make the one-hot with the logits' dtype: Tensor::from_vector(values, {N, V}, logits.dtype())");
  r.check(
      "out of range: a target of V or -1 is refused, forward and backward",
      [] {
        Tensor logits = random_f64({2, 3}, 46);
        Tensor one = Tensor::scalar(1.0, DType::f64);
        const std::vector<std::pair<IntTensor, std::string>> bad = {{IntTensor({2}, {3, 0}), "target 3 with V 3"},
                                                                    {IntTensor({2}, {0, -1}), "target -1"}};
        for (const auto& [t, what] : bad) {
          std::string a = refuses([&] { (void)cross_entropy_forward(logits, t); }, tr("forward: ", "前向：") + what);
          if (!a.empty()) return a;
          std::string b =
              refuses([&] { (void)cross_entropy_backward(logits, t, one); }, tr("backward: ", "反向：") + what);
          if (!b.empty()) return b;
        }
        return std::string();
      },
      "a target outside [0, V) picks no class (or another row's): check every target and throw sf::ShapeError "
      "naming it");
  r.check(
      "float64 gradient check",
      [targets] {
        Tensor logits = random_f64({4, 5}, 43).requires_grad_();
        return gradient_check([targets](const std::vector<Tensor>& in) { return cross_entropy_op(in[0], targets); },
                              {logits}, {"logits"});
      },
      "scale by dloss (a scalar tensor: dloss.item()) as well as by 1/N");
  r.check(
      "edge: large logits (1000, 1001, 1002) and (-1000, 0, 1000)",
      [] {
        IntTensor t({2}, {2, 0});
        Tensor logits = f64({1000, 1001, 1002, -1000, 0, 1000}, {2, 3});
        std::string a = compare(sf::cross_entropy(logits, t), cross_entropy_forward(logits, t), 1e-9, 1e-9);
        if (!a.empty()) return tr("forward ", "前向") + a;
        Tensor x = logits.clone().requires_grad_();
        sf::cross_entropy(x, t).backward();
        std::string b = compare(x.grad(), cross_entropy_backward(logits, t, Tensor::scalar(1.0, DType::f64)));
        return b.empty() ? b : tr("backward ", "反向") + b;
      },
      "log(softmax) computed as a log of a division underflows to log(0) = -inf: use log-sum-exp with the max subtracted");
  r.check(
      "edge: one row, one class (loss 0, gradient 0)",
      [] {
        IntTensor t({1}, {0});
        Tensor logits = f64({2.5}, {1, 1});
        std::string a = compare(0.0, cross_entropy_forward(logits, t).item(), 1e-12, 0);
        if (!a.empty()) return tr("forward ", "前向") + a;
        std::string b = compare(Tensor::zeros({1, 1}, DType::f64),
                                cross_entropy_backward(logits, t, Tensor::scalar(1.0, DType::f64)), 1e-12, 0);
        return b.empty() ? b : tr("backward ", "反向") + b;
      },
      "with one class the probability is 1, so -log 1 = 0 and softmax - onehot = 0");
}

// ---- 08 causal attention ----
static Tensor reference_attention(const Tensor& q, const Tensor& k, const Tensor& v) {
  AttentionOptions options;
  options.causal = true;
  return sf::attention(q, k, v, options);
}

// Attention with the common mistakes, to name the one a wrong result matches: scale is the factor
// the scores are multiplied by, `offset` whether query t sits at S - T + t (else at t), `masked`
// whether the future is masked at all.
static Tensor attention_variant(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool offset,
                                bool masked) {
  const int64_t T = q.size(2), S = k.size(2);
  Tensor scores = matmul(q, transpose(k, -2, -1)) * scale;
  std::vector<double> m(static_cast<size_t>(T * S), 0.0);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s = 0; s < S; ++s) m[t * S + s] = masked && s > (offset ? S - T + t : t) ? 1.0 : 0.0;
  return matmul(sf::softmax(masked_fill(scores, Tensor::from_vector(m, {1, 1, T, S}, q.dtype()), -inf)), v);
}

static std::vector<Mistake> attention_mistakes(const Tensor& q, const Tensor& k, const Tensor& v) {
  const double D = static_cast<double>(q.size(3)), r = 1.0 / std::sqrt(D);
  return {{"the scores are not divided by sqrt(D) (the 1/sqrt(d_k) of scaled dot-product attention)",
           attention_variant(q, k, v, 1.0, true, true)},
          {"the scores are divided by D instead of sqrt(D)", attention_variant(q, k, v, 1.0 / D, true, true)},
          {"the mask ignores the cache offset: query t sits at position S - T + t, not t",
           attention_variant(q, k, v, r, false, true)},
          {"the future is not masked at all", attention_variant(q, k, v, r, true, false)}};
}

void check_causal_attention(Report& r) {
  const char* hint =
      "scores = q k^T / sqrt(D) (B, H, T, S); set scores[t, s] = -inf where s > S - T + t "
      "(masked_fill); out = softmax(scores over s) v";
  struct Case {
    int64_t B, H, T, S, D;
    std::string name, hint;
  };
  const std::vector<Case> cases = {{1, 2, 4, 4, 3, "values, T = S = 4", hint},
                                   {2, 1, 1, 5, 2, "edge: one query, T 1, S 5 (a decoding step sees every key)",
                                    "the query's position is S - T + t = 4: it sees keys 0..4, nothing is masked"},
                                   {1, 1, 3, 5, 2, "edge: T 3 after 2 cached keys (S 5)",
                                    "queries are the last T of the S positions: query t sits at S - T + t, not at t"},
                                   {1, 1, 1, 1, 1, "edge: T = S = D = 1", "one query and one key: the output is v"}};
  for (const Case& c : cases)
    r.check(
        c.name,
        [c] {
          Tensor q = random_f64({c.B, c.H, c.T, c.D}, 51), k = random_f64({c.B, c.H, c.S, c.D}, 52),
                 v = random_f64({c.B, c.H, c.S, c.D}, 53);
          Tensor got = causal_attention(q, k, v);
          return diagnose(compare(reference_attention(q, k, v), got, 1e-9, 1e-7), got, attention_mistakes(q, k, v));
        },
        c.hint);
  r.check(
      "edge: large scores (q scaled by 100)",
      [] {
        Tensor q = random_f64({1, 1, 4, 4}, 54, 100.0), k = random_f64({1, 1, 4, 4}, 55),
               v = random_f64({1, 1, 4, 4}, 56);
        return compare(reference_attention(q, k, v), causal_attention(q, k, v), 1e-9, 1e-7);
      },
      "use a stable softmax (sf::softmax, or your own with the max subtracted)");
  r.check(
      "float32: q, k, v float32 (1, 2, 3, 4) after 1 cached key (S 4) give float32",
      [] {
        Tensor q = random_f64({1, 2, 3, 4}, 60).to(DType::f32), k = random_f64({1, 2, 4, 4}, 61).to(DType::f32),
               v = random_f64({1, 2, 4, 4}, 62).to(DType::f32);
        Tensor got = causal_attention(q, k, v);
        std::string d = same_dtype(got, DType::f32);
        return d.empty() ? compare(reference_attention(q, k, v), got, 1e-6, 1e-5) : d;
      },
      "keep q's dtype: a float32 model needs a float32 output (create any tensor with q.dtype())");
  r.check(
      "float64 gradient check of your attention (q, k, v (1, 2, 3, 2))",
      [] {
        Tensor q = random_f64({1, 2, 3, 2}, 57).requires_grad_(), k = random_f64({1, 2, 3, 2}, 58).requires_grad_(),
               v = random_f64({1, 2, 3, 2}, 59).requires_grad_();
        return gradient_check([](const std::vector<Tensor>& in) { return causal_attention(in[0], in[1], in[2]); },
                              {q, k, v}, {"q", "k", "v"});
      },
      "compose it from sf ops (matmul, transpose, masked_fill, softmax) so autograd can differentiate it");
}

// ---- 09 online softmax ----
static SoftmaxState stream(const std::vector<double>& x) {
  SoftmaxState s;
  for (double v : x) online_softmax_update(s, v);
  return s;
}

// "" when the state of `x` holds the true max and sum of exponentials.
static std::string state_matches(const SoftmaxState& s, const std::vector<double>& x) {
  double m = -inf, l = 0;
  for (double v : x) m = std::max(m, v);
  if (m > -inf)
    for (double v : x) l += std::exp(v - m);
  std::string a = compare(m, s.max, 0, 0);
  if (!a.empty()) return "state.max: " + a;
  std::string b = compare(l, s.sum, 1e-12, 1e-12);
  return b.empty() ? b : "state.sum: " + b;
}

void check_online_softmax(Report& r) {
  const char* hint =
      "for a new score x: m' = max(m, x); sum' = sum * e^(m - m') + e^(x - m'); the old sum is "
      "rescaled to the new max";
  const std::vector<double> x = random_f64({7}, 61).to_vector();
  r.check(
      "update over 7 scores: max and sum", [x] { return state_matches(stream(x), x); }, hint);
  r.check(
      "probabilities e^(x - max) / sum equal softmax",
      [x] {
        SoftmaxState s = stream(x);
        std::vector<double> p;
        for (double v : x) p.push_back(std::exp(v - s.max) / s.sum);
        return compare(sf::softmax(f64(x, {7})).to_vector(), p, 1e-12, 1e-10);
      },
      hint);
  r.check(
      "edge: increasing scores 0, 1, ..., 7 (the max changes at every step)",
      [] {
        std::vector<double> up = {0, 1, 2, 3, 4, 5, 6, 7};
        return state_matches(stream(up), up);
      },
      "when x is a new max, the sum so far was relative to the old max: multiply it by e^(m - x), then add e^0 = 1");
  r.check(
      "edge: large scores 1000, 1002, 999",
      [] {
        std::vector<double> big = {1000, 1002, 999};
        return state_matches(stream(big), big);
      },
      "never exponentiate a raw score: only differences to the running max, which are <= 0");
  r.check(
      "edge: -inf scores (masked), first and in the middle",
      [] {
        std::vector<double> masked = {-inf, 1.5, -inf, 0.5};
        return state_matches(stream(masked), masked);
      },
      "e^(-inf - (-inf)) is nan: a -inf score adds nothing, so leave the state as it is");
  r.check(
      "merge: two blocks (3 and 4 scores) give the state of all 7",
      [x] {
        std::vector<double> a(x.begin(), x.begin() + 3), b(x.begin() + 3, x.end());
        return state_matches(online_softmax_merge(stream(a), stream(b)), x);
      },
      "m = max(m_a, m_b); sum = sum_a e^(m_a - m) + sum_b e^(m_b - m)");
  r.check(
      "merge in either order: the block with the larger max first, then second",
      [] {
        std::vector<double> a = {3.0, 0.5}, b = {-1.0, 1.0, 0.25}, all = {3.0, 0.5, -1.0, 1.0, 0.25};
        std::string ab = state_matches(online_softmax_merge(stream(a), stream(b)), all);
        if (!ab.empty()) return tr("larger max first: ", "最大值较大的在前：") + ab;
        std::string ba = state_matches(online_softmax_merge(stream(b), stream(a)), all);
        return ba.empty() ? ba : tr("larger max second: ", "最大值较大的在后：") + ba;
      },
      "both sums were taken relative to their own block's max: rescale each by e^(its max - m), whichever is larger");
  r.check(
      "edge: merging with an empty block changes nothing; two empty blocks stay empty",
      [x] {
        std::string a = state_matches(online_softmax_merge(SoftmaxState{}, stream(x)), x);
        if (!a.empty()) return tr("empty + block: ", "空 + 块：") + a;
        std::string b = state_matches(online_softmax_merge(stream(x), SoftmaxState{}), x);
        if (!b.empty()) return tr("block + empty: ", "块 + 空：") + b;
        std::string c = state_matches(online_softmax_merge(SoftmaxState{}, SoftmaxState{}), {});
        return c.empty() ? c : tr("empty + empty: ", "空 + 空：") + c;
      },
      "an empty state has max -inf and sum 0; when both maxima are -inf, return an empty state (no e^(-inf + inf))");
}

// ---- 10 split and merge heads ----
void check_split_merge_heads(Report& r) {
  const char* split_hint = "reshape (B, T, C) to (B, T, H, D), then swap axes 1 and 2: (B, H, T, D)";
  const char* merge_hint = "swap axes 1 and 2 back to (B, T, H, D), then reshape to (B, T, H * D)";
  struct Case {
    int64_t B, T, C, H;
  };
  for (Case c : {Case{2, 3, 8, 2}, Case{1, 1, 6, 3}, Case{2, 2, 4, 1}, Case{1, 2, 3, 3}}) {
    std::string dims = "x (" + std::to_string(c.B) + ", " + std::to_string(c.T) + ", " + std::to_string(c.C) + "), H " +
                       std::to_string(c.H);
    r.check(
        "split_heads of " + dims,
        [c] {
          Tensor x = random_f64({c.B, c.T, c.C}, 71);
          return compare(sf::split_heads(x, 1, 0, c.H), exercise::split_heads(x, c.H));
        },
        split_hint);
    r.check(
        "merge_heads back to " + dims,
        [c] {
          Tensor h = random_f64({c.B, c.H, c.T, c.C / c.H}, 72);
          return compare(sf::merge_heads(h), exercise::merge_heads(h));
        },
        merge_hint);
  }
  r.check(
      "float32: split and merge keep float32",
      [] {
        Tensor x = random_f64({1, 2, 6}, 77).to(DType::f32);
        Tensor h = exercise::split_heads(x, 3);
        std::string d = same_dtype(h, DType::f32);
        if (!d.empty()) return "split_heads: " + d;
        std::string v = compare(sf::split_heads(x, 1, 0, 3), h, 0, 0);
        if (!v.empty()) return "split_heads " + v;
        Tensor back = exercise::merge_heads(h);
        std::string dm = same_dtype(back, DType::f32);
        return dm.empty() ? compare(x, back, 0, 0) : "merge_heads: " + dm;
      },
      "reshape and transpose move values without changing their dtype");
  r.check(
      "out of range: H 4 does not divide C 6, refused",
      [] {
        Tensor x = random_f64({1, 2, 6}, 76);
        return refuses([&] { (void)exercise::split_heads(x, 4); },
                       tr("split_heads of C 6 into H 4", "把 C 6 拆成 H 4 的 split_heads"));
      },
      "D = C / H must be a whole number: throw sf::ShapeError naming C and H when H does not divide C");
  r.check(
      "round trip: merge_heads(split_heads(x)) is x",
      [] {
        Tensor x = random_f64({2, 3, 6}, 73);
        return compare(x, exercise::merge_heads(exercise::split_heads(x, 3)), 0, 0);
      },
      "the two are inverses: the same axis swap and reshape in the opposite order");
  r.check(
      "float64 gradient check of both",
      [] {
        Tensor x = random_f64({1, 2, 4}, 74).requires_grad_();
        std::string a =
            gradient_check([](const std::vector<Tensor>& in) { return exercise::split_heads(in[0], 2); }, {x}, {"x"});
        if (!a.empty()) return "split_heads: " + a;
        Tensor h = random_f64({1, 2, 2, 2}, 75).requires_grad_();
        std::string b =
            gradient_check([](const std::vector<Tensor>& in) { return exercise::merge_heads(in[0]); }, {h}, {"x"});
        return b.empty() ? b : "merge_heads: " + b;
      },
      "use sf::reshape and sf::transpose (or permute) on the tensor itself, so the gradient flows back");
}

}  // namespace sf::exercise

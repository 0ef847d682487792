// hints.cpp: each exercise's hints in three tiers, in English and Chinese. Tier 1 is the idea
// (what to think about), tier 2 the formula, tier 3 the code-level hint (which sf ops, which
// trap). A stub gives shapes, the contract and the idea only: the learner derives the rest, and
// asks for it with `scratchformer exercise hint N [tier]` when stuck. A failing check also
// prints the hint of what it found.
#include "autograd/errors.h"
#include "exercises/check/checker.h"

namespace sf::exercise {

namespace {
struct Entry {
  int number;
  HintTiers hints;
};

const Entry kHints[] = {
    {1,
     {{"y = tanh(x) was saved by the forward. Write d tanh(x)/dx in terms of y alone, then use the chain rule: "
       "the gradient arriving from above multiplies the local derivative.",
       "d tanh(x)/dx = 1 - tanh(x)^2 = 1 - y^2, so dx = dy * (1 - y^2), elementwise.",
       "`return dy * (1.0 - y * y);` sf ops work on whole tensors of any shape and keep the dtype; use y, which is "
       "exact where tanh saturates, never x."},
      {"前向传播已经保存了 y = tanh(x)。先只用 y 写出 d tanh(x)/dx，再用链式法则：从上游传来的梯度乘以局部导数。",
       "d tanh(x)/dx = 1 - tanh(x)^2 = 1 - y^2，所以逐元素地 dx = dy * (1 - y^2)。",
       "`return dy * (1.0 - y * y);` sf 的运算作用于任意形状的整个张量，并保持数据类型；用 y，不要用 x："
       "tanh 饱和时 y 是精确的。"}}},
    {2,
     {{"Broadcasting copied each element of the small input many times; in the backward every copy's gradient "
       "adds back into the element it came from. Which axes were created or stretched?",
       "Sum over the leading axes that `shape` does not have (they were prepended), then, keeping the axis, over "
       "every axis where `shape` has size 1 and g does not. (2, 3, 4) -> (3, 1): axis 0, then axis 1 with keepdim.",
       "sf::sum(t, {axes}) drops the axes, sf::sum(t, {axes}, true) keeps them with size 1; a shape with more axes "
       "than g cannot be reached: throw sf::ShapeError naming both."},
      {"广播把小输入的每个元素复制了很多份；反向传播时，每一份副本的梯度都要加回到它来自的那个元素。"
       "想一想：哪些轴是新加出来的，哪些轴被拉伸了？",
       "先对 `shape` 没有的前导轴求和（它们是广播时补在前面的），再对 `shape` 中大小为 1 而 g 中不为 1 的每个轴"
       "求和并保留该轴。(2, 3, 4) -> (3, 1)：先对轴 0 求和，再对轴 1 求和并保留维度。",
       "sf::sum(t, {axes}) 去掉这些轴，sf::sum(t, {axes}, true) 把它们保留为大小 1；目标形状的轴比 g 还多时无法"
       "得到：抛出 sf::ShapeError，写明两个形状。"}}},
    {3,
     {{"The lookup out = W[ids] is a one-hot matrix times W. Its transpose sends each row of dout back to the "
       "row of W it was read from. What happens when a token occurs twice?",
       "dW[v] = sum over every position i with ids[i] == v of dout[i]; rows no id picks stay zero.",
       "dout.to_vector() gives row i at [i * C, (i + 1) * C); add (+=, never =) into a std::vector<double> of "
       "V * C zeros; refuse ids outside [0, V); return Tensor::from_vector(dW, {V, C}, dout.dtype())."},
      {"查表 out = W[ids] 就是独热矩阵乘以 W。它的转置把 dout 的每一行送回它当初读取的那一行 W。"
       "同一个词元出现两次会怎样？",
       "dW[v] = 所有满足 ids[i] == v 的位置 i 上 dout[i] 的和；没有被任何 id 选中的行保持为 0。",
       "dout.to_vector() 中第 i 行位于 [i * C, (i + 1) * C)；累加（+=，不要用 =）到一个 V * C 个 0 的 "
       "std::vector<double>；拒绝 [0, V) 之外的 id；返回 Tensor::from_vector(dW, {V, C}, dout.dtype())。"}}},
    {4,
     {{"Each pair of columns is one sine and one cosine wave of the position; the frequencies fall geometrically "
       "from 1 to 1/10000 across the pairs. Row t is position offset + t.",
       "PE[t, 2i] = sin(p / 10000^(2i / C)), PE[t, 2i + 1] = cos(p / 10000^(2i / C)), p = offset + t.",
       "Fill a std::vector<double> of T * C values (row t at t * C) with std::sin, std::cos, std::pow; column c "
       "belongs to pair c / 2, so its exponent is (c - c % 2) / C; Tensor::from_vector(values, {T, C}, DType::f64)."},
      {"每两列是位置的一条正弦波和一条余弦波；各对列的频率从 1 按几何级数降到 1/10000。第 t 行对应位置 "
       "offset + t。",
       "PE[t, 2i] = sin(p / 10000^(2i / C))，PE[t, 2i + 1] = cos(p / 10000^(2i / C))，其中 p = offset + t。",
       "用 std::sin、std::cos、std::pow 填一个 T * C 个值的 std::vector<double>（第 t 行从 t * C 开始）；第 c 列属于"
       "第 c / 2 对，所以指数是 (c - c % 2) / C；最后 Tensor::from_vector(values, {T, C}, DType::f64)。"}}},
    {5,
     {{"Softmax does not change when the same number is subtracted from every score of a row. Choose the number "
       "that keeps every exponent <= 0. Then think about a row whose every score is -inf.",
       "y_i = e^(x_i - m) / sum_j e^(x_j - m) with m the row max. A row of all -inf has m = -inf and "
       "-inf - (-inf) = nan: its result is defined as zeros.",
       "m = sf::max(x, -1, true) keeps the axis so it broadcasts; sf::exp; sf::sum(e, -1, true). For fully masked "
       "rows set m to 0 there (sf::masked_fill with a 0/1 tensor of x's dtype) and add that 0/1 tensor to the row "
       "sums. Do not call sf::softmax: it is what the checker compares with."},
      {"给一行中的每个分数减去同一个数，softmax 不变。选一个能让所有指数都 <= 0 的数。再想一想：一行的分数全是 -inf "
       "时怎么办？",
       "y_i = e^(x_i - m) / sum_j e^(x_j - m)，m 是这一行的最大值。全为 -inf 的行 m = -inf，而 -inf - (-inf) = "
       "nan：这种行的结果规定为全 0。",
       "m = sf::max(x, -1, true) 保留该轴，可以广播；sf::exp；sf::sum(e, -1, true)。对于完全被遮住的行，把那里的 m "
       "置为 0（用 sf::masked_fill 和一个与 x 同类型的 0/1 张量），并把这个 0/1 张量加到行和上。不要调用 "
       "sf::softmax：检查器正是拿它来比对的。"}}},
    {6,
     {{"Write the Jacobian of one row, dy_i/dx_j, treating i = j and i != j separately (the lesson's 'derive it "
       "first' box walks through it). Then apply its transpose to dy without building the N x N matrix.",
       "dy_i/dx_j = y_i (delta_ij - y_j), so dx_i = sum_j dy_j y_j (delta_ij - y_i) = y_i (dy_i - sum_j dy_j y_j).",
       "`return y * (dy - sf::sum(dy * y, -1, true));` the sum is one number per row, kept as (..., 1) so it "
       "broadcasts; from y alone, so masked entries (y = 0) get exactly 0."},
      {"写出一行的雅可比矩阵 dy_i/dx_j，把 i = j 和 i != j 分开考虑（课文中“先自己推导”一节会一步步带你推）。"
       "然后把它的转置作用到 dy 上，不要真的构造 N x N 矩阵。",
       "dy_i/dx_j = y_i (delta_ij - y_j)，所以 dx_i = sum_j dy_j y_j (delta_ij - y_i) = y_i (dy_i - sum_j dy_j y_j)。",
       "`return y * (dy - sf::sum(dy * y, -1, true));` 求和结果每行一个数，保留为 (..., 1) 以便广播；只用 y 计算，"
       "这样被遮住的位置（y = 0）梯度恰好是 0。"}}},
    {7,
     {{"The loss is minus the log-probability of the right class, averaged over rows. Take the log of softmax "
       "analytically (log of a quotient) instead of numerically; for the gradient, differentiate -log softmax "
       "with respect to every logit, and remember the mean and the dloss arriving from above.",
       "log_softmax(x)_j = (x_j - m) - log(sum_k e^(x_k - m)); loss = -(1/N) sum_n log_softmax(logits_n)[t_n]; "
       "d loss / d logits = (softmax(logits) - onehot(targets)) / N * dloss.",
       "Build onehot (N, V) with Tensor::from_vector(values, {N, V}, logits.dtype()) (float64 does not mix with a "
       "float32 model); refuse targets outside [0, V) with sf::ShapeError; loss = -sum(logp * onehot) / N; scale "
       "the gradient by dloss.item()."},
      {"损失是正确类别的对数概率取负，再对各行求平均。对 softmax 取对数时用解析式（商的对数）而不是数值上直接取 "
       "log；求梯度时对每个 logit 求 -log softmax 的导数，别忘了平均，也别忘了从上游传来的 dloss。",
       "log_softmax(x)_j = (x_j - m) - log(sum_k e^(x_k - m))；loss = -(1/N) sum_n log_softmax(logits_n)[t_n]；"
       "d loss / d logits = (softmax(logits) - onehot(targets)) / N * dloss。",
       "用 Tensor::from_vector(values, {N, V}, logits.dtype()) 构造独热矩阵 (N, V)（float64 不能和 float32 模型混用）；"
       "超出 [0, V) 的目标用 sf::ShapeError 拒绝；loss = -sum(logp * onehot) / N；梯度乘以 dloss.item()。"}}},
    {8,
     {{"Each query scores every key by a dot product, scaled so the scores' spread does not grow with D; the "
       "future is removed before the softmax; the output averages the values with those weights. With a cache, "
       "the T queries are the last T of the S positions.",
       "scores = q k^T / sqrt(D); scores[t, s] = -inf where s > S - T + t; out = softmax(scores over s) v.",
       "sf::matmul(q, sf::transpose(k, -2, -1)); a (1, 1, T, S) 0/1 mask from Tensor::from_vector(values, "
       "{1, 1, T, S}, q.dtype()); sf::masked_fill(scores, mask, -INFINITY); sf::softmax(.., -1); sf::matmul with v. "
       "Only sf ops on q, k, v: the checker differentiates your function."},
      {"每个查询用点积给每个键打分，并做缩放，使分数的离散程度不随 D 增大；softmax 之前去掉未来的位置；输出是按这些"
       "权重对值做的加权平均。有缓存时，T 个查询是 S 个位置中的最后 T 个。",
       "scores = q k^T / sqrt(D)；当 s > S - T + t 时 scores[t, s] = -inf；out = softmax(按 s 的 scores) v。",
       "sf::matmul(q, sf::transpose(k, -2, -1))；用 Tensor::from_vector(values, {1, 1, T, S}, q.dtype()) 构造 "
       "(1, 1, T, S) 的 0/1 掩码；sf::masked_fill(scores, mask, -INFINITY)；sf::softmax(.., -1)；再和 v 做 "
       "sf::matmul。只对 q、k、v 使用 sf 的运算：检查器要对你的函数做自动微分。"}}},
    {9,
     {{"Keep the sum of exponentials relative to the largest score seen so far. When a larger score arrives, "
       "everything summed so far was measured against the old max: by what factor must it be rescaled?",
       "update: m' = max(m, x), l' = l e^(m - m') + e^(x - m'). merge: m = max(m_a, m_b), "
       "l = l_a e^(m_a - m) + l_b e^(m_b - m).",
       "std::exp and std::max; exponentiate only differences to a max (<= 0). A -inf score leaves the state "
       "unchanged (e^(-inf - (-inf)) is nan); merging two empty states ({-inf, 0}) returns an empty state."},
      {"让指数和始终相对于目前见过的最大分数来计算。来了一个更大的分数时，之前累加的都是相对旧最大值算的："
       "它们要乘以什么因子来重新缩放？",
       "更新：m' = max(m, x)，l' = l e^(m - m') + e^(x - m')。合并：m = max(m_a, m_b)，"
       "l = l_a e^(m_a - m) + l_b e^(m_b - m)。",
       "用 std::exp 和 std::max；只对与最大值的差（<= 0）取指数。-inf 分数不改变状态（e^(-inf - (-inf)) 是 nan）；"
       "两个空状态（{-inf, 0}）合并后仍是空状态。"}}},
    {10,
     {{"The C channels of a token are H blocks of D side by side. Splitting exposes the head as its own axis in "
       "front of time; merging undoes exactly that, in the opposite order.",
       "split: channel h * D + d of token t becomes element (h, t, d), D = C / H; merge is its inverse.",
       "split = sf::reshape to (B, T, H, D), then sf::transpose(x, 1, 2); merge = sf::transpose(x, 1, 2), then "
       "sf::reshape to (B, T, H * D). Refuse an H that does not divide C (sf::ShapeError)."},
      {"一个词元的 C 个通道是 H 个长度为 D 的块并排放着。拆分把“头”变成时间轴前面的一个独立轴；合并按相反的顺序"
       "把这一步完全撤销。",
       "拆分：词元 t 的第 h * D + d 个通道变成元素 (h, t, d)，D = C / H；合并是它的逆运算。",
       "拆分 = 用 sf::reshape 变成 (B, T, H, D)，再 sf::transpose(x, 1, 2)；合并 = 先 sf::transpose(x, 1, 2)，再 "
       "sf::reshape 成 (B, T, H * D)。H 不能整除 C 时拒绝（sf::ShapeError）。"}}},
    {11,
     {{"Per token: centre the row, divide by its standard deviation (with eps so it is never 0), then scale and "
       "shift per channel. Think about how to compute the variance so that rows far from zero keep their digits.",
       "mean = (1/C) sum x, var = (1/C) sum (x - mean)^2 (biased), y = (x - mean) / sqrt(var + eps) * w + b.",
       "sf::mean(x, -1, true) keeps the axis so it broadcasts; take the mean of (x - mean)^2, never mean(x^2) - "
       "mean^2; eps is the argument, inside sf::sqrt."},
      {"对每个词元：把这一行中心化，除以它的标准差（加 eps 保证不为 0），再逐通道缩放和平移。想一想方差怎么算，"
       "才能让远离 0 的行不丢有效数字。",
       "mean = (1/C) sum x，var = (1/C) sum (x - mean)^2（有偏），y = (x - mean) / sqrt(var + eps) * w + b。",
       "sf::mean(x, -1, true) 保留该轴以便广播；对 (x - mean)^2 求平均，不要用 mean(x^2) - mean^2；eps 用参数传进来"
       "的值，放在 sf::sqrt 里面。"}}},
    {12,
     {{"Go backward one step at a time (lesson layernorm's 'derive it first' box): y from xhat, xhat from x - mean "
       "and rstd, and both the mean and the variance depend on every x of the row. Each dependence adds one term.",
       "g = dy w; dx = rstd (g - mean(g) - xhat mean(g xhat)) per row, rstd = 1 / sqrt(var + eps); dw = sum over "
       "rows of dy xhat; db = sum over rows of dy.",
       "Rows are every axis but the last: collect axes 0 .. x.dim() - 2 for sf::sum(t, axes); per-row means are "
       "sf::mean(t, -1, true); use the eps argument."},
      {"一步一步往回推（见 layernorm 课“先自己推导”一节）：y 来自 xhat，xhat 来自 x - mean 和 rstd，而均值和方差都"
       "依赖这一行里的每一个 x。每一种依赖都会多出一项。",
       "g = dy w；逐行 dx = rstd (g - mean(g) - xhat mean(g xhat))，其中 rstd = 1 / sqrt(var + eps)；dw = 对所有行求和 "
       "dy xhat；db = 对所有行求和 dy。",
       "“行”指除最后一个轴以外的所有轴：把轴 0 .. x.dim() - 2 收集起来给 sf::sum(t, axes)；每行的均值用 "
       "sf::mean(t, -1, true)；eps 用参数。"}}},
    {13,
     {{"GELU is x times a smooth step built from tanh. Its derivative needs the product rule (x times the step) "
       "and the chain rule through tanh and the cubic inside it.",
       "u = sqrt(2/pi) (x + 0.044715 x^3), t = tanh(u), y = 0.5 x (1 + t); dy/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) "
       "sqrt(2/pi) (1 + 3 * 0.044715 x^2); dx = dy * dy/dx.",
       "Elementwise sf ops (sf::tanh, * and + with doubles); std::sqrt(2.0 / std::numbers::pi) is a plain double; "
       "multiply by dy at the end."},
      {"GELU 是 x 乘以一个由 tanh 构成的平滑阶跃。它的导数要用乘积法则（x 乘以阶跃），再用链式法则穿过 tanh 和其中的"
       "三次项。",
       "u = sqrt(2/pi) (x + 0.044715 x^3)，t = tanh(u)，y = 0.5 x (1 + t)；dy/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) "
       "sqrt(2/pi) (1 + 3 * 0.044715 x^2)；dx = dy * dy/dx。",
       "用逐元素的 sf 运算（sf::tanh，与 double 做 * 和 +）；std::sqrt(2.0 / std::numbers::pi) 就是一个普通 double；"
       "最后乘以 dy。"}}},
    {14,
     {{"The keys and values of earlier tokens never change; the new ones go after them in time order.",
       "cache.k = concat(cache.k, k) along axis 2 (S); the same for v; an empty cache takes k and v as they are.",
       "sf::concat({cache.k, k}, 2); cache.k.defined() is false while empty; keys whose B, H or D differ are "
       "refused (sf::concat throws sf::ShapeError)."},
      {"之前词元的键和值不会再变；新的键值按时间顺序接在后面。",
       "沿轴 2（S）做 cache.k = concat(cache.k, k)，v 同理；空缓存直接取 k 和 v。",
       "sf::concat({cache.k, k}, 2)；缓存为空时 cache.k.defined() 为 false；B、H 或 D 不一致的键要拒绝（sf::concat "
       "会抛出 sf::ShapeError）。"}}},
    {15,
     {{"Two pieces glued at step W: a straight line up, then half a cosine down to min_lr at step S, flat after.",
       "step < W: lr (step + 1) / (W + 1); else q = min(1, (step - W) / (S - W)), lr_t = min_lr + (lr - min_lr) "
       "(1 + cos(pi q)) / 2.",
       "Compute q in double (static_cast<double>); std::cos and std::numbers::pi; the min(1, ...) keeps the rate at "
       "min_lr after S."},
      {"在第 W 步接起来的两段：先直线上升，再沿半个余弦下降，在第 S 步降到 min_lr，之后保持不变。",
       "step < W 时：lr (step + 1) / (W + 1)；否则 q = min(1, (step - W) / (S - W))，lr_t = min_lr + (lr - min_lr) "
       "(1 + cos(pi q)) / 2。",
       "用 double 计算 q（static_cast<double>）；std::cos 和 std::numbers::pi；min(1, ...) 让学习率在 S 之后停在 "
       "min_lr。"}}},
    {16,
     {{"Treat all gradients as one long vector: its length decides, and all of them are scaled by the same "
       "factor so the direction is kept.",
       "norm = sqrt(sum of g^2 over every element of every gradient); c = max_norm / (norm + 1e-6); multiply by c "
       "only when c < 1; return the norm before clipping.",
       "Accumulate the squares in a double (1e20^2 overflows float, not double); two nested range-for loops."},
      {"把所有梯度看成一个长向量：由它的长度决定是否裁剪，并且所有梯度乘以同一个因子，方向保持不变。",
       "norm = sqrt(所有梯度的所有元素的 g^2 之和)；c = max_norm / (norm + 1e-6)；只有 c < 1 时才乘以 c；返回裁剪前的 "
       "norm。",
       "用 double 累加平方和（1e20^2 在 float 中溢出，在 double 中不会）；两层 range-for 循环。"}}},
    {17,
     {{"Two running averages per weight (of g and of g^2), both started at zero and so biased towards zero early "
       "on; the step is their ratio; the decay shrinks the weight itself, not the gradient.",
       "p *= 1 - lr wd; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; p -= lr / (1 - b1^t) * m / (sqrt(v) / "
       "sqrt(1 - b2^t) + eps).",
       "std::pow(beta, t) for the bias corrections; use every field of the config (beta1, beta2, eps, "
       "weight_decay), never the defaults."},
      {"每个权重有两个滑动平均（g 的和 g^2 的），都从 0 开始，所以初期偏向 0；更新量是两者之比；权重衰减直接缩小"
       "权重本身，而不是加到梯度上。",
       "p *= 1 - lr wd；m = b1 m + (1 - b1) g；v = b2 v + (1 - b2) g^2；p -= lr / (1 - b1^t) * m / (sqrt(v) / "
       "sqrt(1 - b2^t) + eps)。",
       "偏差校正用 std::pow(beta, t)；配置里的每个字段（beta1、beta2、eps、weight_decay）都要用上，不要写死默认值。"}}},
    {18,
     {{"The gradients arrive multiplied by the scale: undo that first. An overflow means the scale is too large "
       "(skip and shrink); a run of good steps means it may be too small (grow).",
       "g /= S; any g inf or nan: S *= backoff_factor, good_steps = 0, return false; else good_steps += 1, and at "
       "growth_interval: S *= growth_factor, good_steps = 0; return true.",
       "std::isfinite(x) is false for inf and nan; use the scaler's growth_factor and backoff_factor."},
      {"梯度到来时已经乘上了缩放因子：先把它除掉。出现溢出说明缩放因子太大（跳过这一步并缩小）；连续很多步正常说明"
       "它可能太小（放大）。",
       "g /= S；只要有 g 是 inf 或 nan：S *= backoff_factor，good_steps = 0，返回 false；否则 good_steps += 1，达到 "
       "growth_interval 时 S *= growth_factor，good_steps = 0；返回 true。",
       "std::isfinite(x) 对 inf 和 nan 都返回 false；使用缩放器自己的 growth_factor 和 backoff_factor。"}}},
    {19,
     {{"The attention of exercise 8 wrapped in a layer with weights: one projection makes q, k and v for every "
       "token, the heads attend independently, and a second projection mixes what they found. With a cache, the "
       "new tokens' keys and values join the cached ones before anyone attends.",
       "qkv = x W_attn^T + b_attn (B, T, 3C), cut into q, k, v (B, T, C) each; split to (B, H, T, D); append k, v "
       "to the cache (S keys in all); out = softmax(mask(q k^T / sqrt(D))) v with query t at position S - T + t; "
       "merge to (B, T, C); y = out W_proj^T + b_proj.",
       "sf::linear(x, w, b) for both projections, sf::slice(qkv, 2, 0, C) (then C..2C, 2C..3C) for the chunks; "
       "your split_heads, merge_heads (exercise::merge_heads, not sf::merge_heads), kv_cache_append(*cache, k, v) "
       "and your_softmax; build the mask with x's dtype. Only sf ops on tensors: the checker differentiates it."},
      {"练习 8 的注意力，放进一个带权重的层里：一次投影为每个词元得到 q、k、v，各个头独立地做注意力，再用第二次投影把"
       "它们找到的信息混合起来。有缓存时，新词元的键和值先接到缓存的后面，然后才做注意力。",
       "qkv = x W_attn^T + b_attn（B, T, 3C），切成 q、k、v（各为 B, T, C）；拆成 (B, H, T, D)；把 k、v 追加进缓存"
       "（共 S 个键）；out = softmax(mask(q k^T / sqrt(D))) v，第 t 个查询位于位置 S - T + t；合并回 (B, T, C)；"
       "y = out W_proj^T + b_proj。",
       "两次投影都用 sf::linear(x, w, b)，用 sf::slice(qkv, 2, 0, C)（以及 C..2C、2C..3C）切块；用你自己的 "
       "split_heads、merge_heads（exercise::merge_heads，不是 sf::merge_heads）、kv_cache_append(*cache, k, v) 和 "
       "your_softmax；掩码用 x 的数据类型构造。只对张量用 sf 的运算：检查器要对它求导。"}}},
    {20,
     {{"Two residual sublayers, attention then the MLP. Pre-LN normalises what goes into each sublayer and adds "
       "the sublayer's output back onto the untouched x, so the residual path stays a clean sum.",
       "h = x + attn(LN_1(x)); out = h + W_2 GELU(W_1 LN_2(h) + b_1) + b_2, with W_1 (4C, C) and W_2 (C, 4C). "
       "Post-LN, LN(x + attn(x)), is a different model and fails the check.",
       "your_layer_norm(x, block.ln_1.weight, block.ln_1.bias, block.ln_1.eps) (the block's own eps, not 1e-5), "
       "your causal_self_attention(block.attn, ..., cache), sf::linear with block.mlp.c_fc and block.mlp.c_proj, "
       "your_gelu between them."},
      {"两个残差子层，先注意力后 MLP。Pre-LN 先对每个子层的输入做归一化，再把子层的输出加回没有改动过的 x 上，"
       "这样残差通路始终是一条干净的求和。",
       "h = x + attn(LN_1(x))；out = h + W_2 GELU(W_1 LN_2(h) + b_1) + b_2，其中 W_1 为 (4C, C)，W_2 为 (C, 4C)。"
       "Post-LN 即 LN(x + attn(x))，是另一个模型，通不过检查。",
       "your_layer_norm(x, block.ln_1.weight, block.ln_1.bias, block.ln_1.eps)（用该块自己的 eps，不是 1e-5），"
       "你的 causal_self_attention(block.attn, ..., cache)，用 sf::linear 配合 block.mlp.c_fc 和 block.mlp.c_proj，"
       "两者之间是 your_gelu。"}}},
    {21,
     {{"Token ids become vectors (a row of the token table plus a row of the position table), the blocks "
       "transform the sequence, a final LayerNorm and the head give V scores per position, and the loss measures "
       "how surprised those scores are by the targets. With a cache, positions continue where the cache ends.",
       "offset = cache ? cache->length() : 0; x = wte[idx] + wpe[offset .. offset + T - 1] (B, T, C); x = block_i(x) "
       "for each layer; logits = LN_f(x) W_head^T (B, T, V), no bias; loss = mean over B * T positions of "
       "-log softmax(logits)[target]. offset + T > block_size is a ShapeError.",
       "your_embedding(model.wte.weight, idx) and your_embedding(model.wpe->weight, positions) with positions an "
       "IntTensor({T}, ...) holding offset .. offset + T - 1 (it broadcasts over B); one KVCache per block in cache->layers (make them when it is empty); "
       "sf::linear(x, model.lm_head->weight) for the head; your_cross_entropy(reshape(logits, {B * T, V}), the "
       "targets reshaped to (B * T))."},
      {"词元 id 变成向量（词元表的一行加上位置表的一行），各个块变换这段序列，最后的 LayerNorm 和输出头为每个位置"
       "给出 V 个分数，损失衡量这些分数对目标有多意外。有缓存时，位置从缓存结束的地方接着往下数。",
       "offset = cache ? cache->length() : 0；x = wte[idx] + wpe[offset .. offset + T - 1]（B, T, C）；逐层 "
       "x = block_i(x)；logits = LN_f(x) W_head^T（B, T, V），没有偏置；loss = 对 B * T 个位置取 "
       "-log softmax(logits)[target] 的平均。offset + T > block_size 时抛出 ShapeError。",
       "your_embedding(model.wte.weight, idx) 和 your_embedding(model.wpe->weight, positions)，positions 是 "
       "IntTensor({T}, ...)，存放 offset .. offset + T - 1（它会沿 B 广播）；cache->layers 里每个块一个 KVCache（为空时创建）；输出头用 "
       "sf::linear(x, model.lm_head->weight)；your_cross_entropy(reshape(logits, {B * T, V}), 变形为 (B * T) 的"
       "目标)。"}}},
    {22,
     {{"A step is the training loop's body in order: forget the last step's gradients, differentiate this "
       "batch's loss, keep one bad batch from throwing the weights far, then move every weight by AdamW at the "
       "rate the schedule gives this step.",
       "zero grads; loss = gpt_forward(x, y).loss; backward; n = ||all grads||_2, scale them by c = max_norm / (n + 1e-6) when c < 1 (exercise 16); "
       "lr = schedule(state.step); AdamW with t = state.step + 1, weight decay only where dim() >= 2; "
       "state.step += 1; return {loss, n, lr}.",
       "model.zero_grad(); loss.backward(); values_of(p.grad()) for each of model.parameters(), your "
       "clip_grad_norm on those vectors; your warmup_cosine_lr(config.schedule, state.step); copy config.adamw, set its "
       "lr (and weight_decay = 0 for dim() < 2), your adamw_step on values_of(p) and set_values(p, ...) back; size "
       "state.m and state.v (zeros) on the first step."},
      {"一步就是训练循环的循环体，按顺序：清掉上一步的梯度，对这一批的损失求导，防止一个坏批次把权重推得太远，"
       "再按调度器给这一步的学习率用 AdamW 更新每个权重。",
       "梯度清零；loss = gpt_forward(x, y).loss；反向传播；n = ||所有梯度||_2，当 c = max_norm / (n + 1e-6) < 1 时把它们乘以 c（练习 16）；"
       "lr = schedule(state.step)；AdamW 取 t = state.step + 1，只对 dim() >= 2 的参数做权重衰减；state.step += 1；"
       "返回 {loss, n, lr}。",
       "model.zero_grad()；loss.backward()；对 model.parameters() 的每一个取 values_of(p.grad())，再对这些向量"
       "用你的 clip_grad_norm；你的 warmup_cosine_lr(config.schedule, state.step)；复制 config.adamw，设置它的 lr"
       "（dim() < 2 时 weight_decay = 0），对 values_of(p) 用你的 adamw_step，再用 set_values(p, ...) 写回；"
       "第一步时把 state.m 和 state.v 建成全零。"}}},
    {23,
     {{"Writing text is drawing one token from the model's scores, appending it and asking again. Temperature "
       "sharpens or flattens the distribution, top-k and top-p cut its tail. The KV cache makes each new token cost "
       "one position instead of the whole prefix.",
       "Sort ids by logit (ties: smaller id first); keep the top_k; p_i = exp((z_i - z_max) / temperature); keep the "
       "shortest prefix whose mass reaches top_p times the kept total; r = uniform() * total, walk subtracting p_i "
       "until r < 0. generate: feed the prompt's last block_size tokens once, then one token per step; when the "
       "cache would pass block_size, clear it and feed the last block_size tokens again.",
       "std::iota and std::stable_sort for the order; temperature <= 0 returns the argmax without a draw; "
       "sf::NoGradGuard in generate; the last position's logits are the last V values of values_of(logits) of the "
       "(1, T, V) output; pass `cache` to your gpt_forward and cache.clear() (or a fresh GPTCache) when it is full."},
      {"写文本就是从模型的分数里抽一个词元，接到后面，再问一次。温度让分布变尖或变平，top-k 和 top-p 砍掉它的尾部。"
       "KV 缓存让每个新词元只花一个位置的计算，而不是整个前缀。",
       "按 logit 给 id 排序（相等时 id 小的在前）；保留前 top_k 个；p_i = exp((z_i - z_max) / temperature)；保留"
       "质量达到 top_p 乘以保留总量的最短前缀；r = uniform() * total，依次减去 p_i，直到 r < 0。generate：先把提示的"
       "最后 block_size 个词元送进去一次，之后每步只送一个词元；缓存将超过 block_size 时，清空它，再把最后 "
       "block_size 个词元送进去。",
       "排序用 std::iota 和 std::stable_sort；temperature <= 0 时直接返回 argmax，不抽样；generate 里用 "
       "sf::NoGradGuard；最后一个位置的 logits 是 (1, T, V) 输出的 values_of(logits) 的最后 V 个值；把 `cache` "
       "传给你的 gpt_forward，满了就 cache.clear()（或换一个新的 GPTCache）。"}}},
    {24,
     {{"Three steps, each one you have met: out = P v is a matmul (the gradient of a b is dout b^T for a and "
       "a^T dout for b), P = softmax(S) is exercise 6, S = q k^T / sqrt(D) is a matmul times a constant. Recompute P "
       "from q and k first.",
       "dv = P^T dout; dP = dout v^T; dS = P (dP - sum_s dP P) per row; dq = dS k / sqrt(D); dk = dS^T q / sqrt(D).",
       "sf::transpose(t, -2, -1) for the transposes, sf::matmul, sf::sum(dP * P, -1, true); rebuild exercise 8's mask "
       "with q's dtype and sf::softmax the masked scores; masked entries have P = 0 and need nothing special."},
      {"三步，每一步你都见过：out = P v 是矩阵乘法（a b 对 a 的梯度是 dout b^T，对 b 的是 a^T dout），P = softmax(S) 是"
       "练习 6，S = q k^T / sqrt(D) 是矩阵乘法再乘一个常数。先由 q 和 k 重新算出 P。",
       "dv = P^T dout；dP = dout v^T；逐行 dS = P (dP - sum_s dP P)；dq = dS k / sqrt(D)；dk = dS^T q / sqrt(D)。",
       "转置用 sf::transpose(t, -2, -1)，再用 sf::matmul 和 sf::sum(dP * P, -1, true)；用与 q 相同的数据类型重建练习 8 "
       "的掩码，再对遮住后的分数做 sf::softmax；被遮住的位置 P = 0，不需要特殊处理。"}}},
    {25,
     {{"Count per query, then add up: a causal query t sees t + 1 keys and does D multiply-adds per key and head "
       "twice (scores, then mixing values); a linear layer of n_out x n_in costs n_out n_in per token.",
       "attention_macs = sum_t 2 (t + 1) C = T (T + 1) C (H D = C); linear_macs = (3 + 1 + 4 + 4) C^2 T = 12 T C^2; "
       "p_bytes = H T^2 bytes_per_number.",
       "int64_t arithmetic (GPT-2 sizes pass 2^31); throw sf::ShapeError when H does not divide C or a size is < 1."},
      {"按每个查询来数，再加起来：因果注意力中查询 t 能看到 t + 1 个键，每个键每个头做 D 次乘加，而且要做两遍（先算"
       "分数，再混合值）；n_out x n_in 的线性层每个词元花费 n_out n_in 次乘加。",
       "attention_macs = sum_t 2 (t + 1) C = T (T + 1) C（H D = C）；linear_macs = (3 + 1 + 4 + 4) C^2 T = 12 T C^2；"
       "p_bytes = H T^2 bytes_per_number。",
       "用 int64_t 计算（GPT-2 的尺寸会超过 2^31）；H 不能整除 C 或某个大小 < 1 时抛出 sf::ShapeError。"}}},
    {26,
     {{"Entropy measures how spread a distribution is: large when the weight is shared, 0 when one key takes it "
       "all. A masked key has p = 0 and must add nothing.",
       "H = -sum_j p_j ln p_j over the last axis, with 0 ln 0 = 0 (the limit of p ln p as p -> 0).",
       "sf::log(0) is -inf and 0 * -inf is nan: take the log of p where p > 0 and of 1 where p = 0 (a 0/1 tensor "
       "from sf::masked_fill), then -sf::sum(p * log, -1)."},
      {"熵衡量一个分布有多分散：权重被分摊时熵大，一个键拿走全部权重时熵为 0。被遮住的键 p = 0，不能有任何贡献。",
       "H = -sum_j p_j ln p_j，对最后一个轴求和，并约定 0 ln 0 = 0（p -> 0 时 p ln p 的极限）。",
       "sf::log(0) 是 -inf，而 0 * -inf 是 nan：p > 0 处取 p 的对数，p = 0 处取 1 的对数（用 sf::masked_fill 得到一个 "
       "0/1 张量），再算 -sf::sum(p * log, -1)。"}}},
    {27,
     {{"Everything a partial row holds, its sum and its output alike, was accumulated relative to its own max. To "
       "add two of them, bring both to the common max first.",
       "m = max(m_a, m_b); c_a = e^(m_a - m), c_b = e^(m_b - m); sum = sum_a c_a + sum_b c_b; out = out_a c_a + "
       "out_b c_b.",
       "An empty row (max -inf) returns the other unchanged, before any exponential (e^(-inf - (-inf)) is nan); "
       "outputs of different sizes throw sf::ShapeError."},
      {"部分行里存的所有东西，指数和也好、输出也好，都是相对它自己的最大值累加的。要把两个部分行相加，先把它们都换算到"
       "共同的最大值上。",
       "m = max(m_a, m_b)；c_a = e^(m_a - m)，c_b = e^(m_b - m)；sum = sum_a c_a + sum_b c_b；out = out_a c_a + "
       "out_b c_b。",
       "空行（max 为 -inf）直接返回另一行，不要先取指数（e^(-inf - (-inf)) 是 nan）；输出长度不同时抛出 "
       "sf::ShapeError。"}}},
    {30,
     {{"RoPE turns each channel pair like the hand of a clock, faster for the first pairs; two rotated vectors' dot "
       "product only sees the difference of their angles. ALiBi simply penalises a score by its distance, more "
       "steeply in some heads than others.",
       "RoPE: theta_i = p 10000^(-2i/D), y[i] = x[i] cos - x[i + D/2] sin, y[i + D/2] = x[i + D/2] cos + x[i] sin. "
       "ALiBi: bias[0, h, t, s] = -m_h |S - T + t - s|.",
       "RoPE: build cos and sin as (T, D/2) tensors with x's dtype, split x with sf::slice(x, 3, 0, D/2) and "
       "sf::slice(x, 3, D/2, D), join with sf::concat(.., 3). ALiBi: fill a std::vector<double> and "
       "Tensor::from_vector(values, {1, H, T, S}, DType::f64)."},
      {"RoPE 把每一对通道像钟表的指针一样旋转，越靠前的通道对转得越快；两个旋转后的向量做点积，只看得到它们角度之差。"
       "ALiBi 则直接按距离惩罚分数，有的头惩罚得陡，有的头平缓。",
       "RoPE：theta_i = p 10000^(-2i/D)，y[i] = x[i] cos - x[i + D/2] sin，y[i + D/2] = x[i + D/2] cos + x[i] sin。"
       "ALiBi：bias[0, h, t, s] = -m_h |S - T + t - s|。",
       "RoPE：用与 x 相同的数据类型构造 (T, D/2) 的 cos 和 sin 张量，用 sf::slice(x, 3, 0, D/2) 和 "
       "sf::slice(x, 3, D/2, D) 拆开 x，再用 sf::concat(.., 3) 拼起来。ALiBi：填一个 std::vector<double>，再 "
       "Tensor::from_vector(values, {1, H, T, S}, DType::f64)。"}}},
    {31,
     {{"A mean-loss gradient is a sum of row gradients divided by the rows. Undo each micro-batch's division, add, "
       "and divide once by all the rows.",
       "g = sum_k rows_k g_k / sum_k rows_k; with equal sizes this is the plain mean of the g_k.",
       "Accumulate in a std::vector<double> of zeros; check the counts and sizes first (sf::ShapeError)."},
      {"均值损失的梯度等于各行梯度之和除以行数。先撤销每个微批次各自的除法，加起来，再除以总行数一次。",
       "g = sum_k rows_k g_k / sum_k rows_k；各微批次大小相同时，它就是各 g_k 的简单平均。",
       "在一个全 0 的 std::vector<double> 里累加；先检查个数和长度（不符时抛出 sf::ShapeError）。"}}},
    {28,
     {{"A causal mask hides the future; a window also hides the distant past. Which keys lie in both the past "
       "(and present) and the last W positions of query t?",
       "p = S - T + t; key s is visible when p - W < s <= p, so mask[t, s] = 1 when s > p or s <= p - W.",
       "Fill a std::vector<double> of T * S values and return Tensor::from_vector(values, {T, S}, DType::f64); "
       "check W >= 1 and S >= T first (sf::ShapeError)."},
      {"因果掩码遮住未来；窗口还遮住较远的过去。哪些键既在查询 t 的过去（或当前）、又在它最近的 W 个位置之内？",
       "p = S - T + t；当 p - W < s <= p 时键 s 可见，所以 s > p 或 s <= p - W 时 mask[t, s] = 1。",
       "填一个 T * S 个值的 std::vector<double>，返回 Tensor::from_vector(values, {T, S}, DType::f64)；先检查 W >= 1 "
       "且 S >= T（否则抛出 sf::ShapeError）。"}}},
    {29,
     {{"For each new token, every layer stores one key vector and one value vector per key/value head; query heads "
       "do not store anything.",
       "bytes per token = 2 x n_layer x n_kv_head x D x bytes_per_number (n_head only decides whether n_kv_head is "
       "valid).",
       "Integer arithmetic in int64_t; throw sf::ShapeError when n_head % n_kv_head != 0 or a size is < 1."},
      {"每来一个新词元，每一层为每个键/值头存一个键向量和一个值向量；查询头什么都不存。",
       "每个词元的字节数 = 2 x n_layer x n_kv_head x D x bytes_per_number（n_head 只决定 n_kv_head 是否合法）。",
       "用 int64_t 做整数运算；n_head % n_kv_head != 0 或某个大小 < 1 时抛出 sf::ShapeError。"}}},
};
}  // namespace

const HintTiers& hints_of(int number) {
  for (const Entry& e : kHints)
    if (e.number == number) return e.hints;
  throw Error("exercise " + std::to_string(number) + " has no hints (exercises/check/hints.cpp)");
}

}  // namespace sf::exercise

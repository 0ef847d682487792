// Lesson 17: scaling out. Why averaging gradients over ranks is one step on a larger batch (real
// runs of a tiny GPT), what a ring all-reduce moves, what that costs at 8 to 1024 GPUs (a model,
// not a measurement), and where data parallelism stops helping. Text: scaling_out.md.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <ostream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "lessons/lesson.h"
#include "lessons/scaling_out.h"
#include "train/config.h"
#include "train/distributed.h"
#include "train/task.h"
#include "train/train.h"

namespace sf::lessons {

// A difference at float32 rounding level, printed as a bound: its exact digits depend on the
// order of additions, which differs between builds (an optimised and a sanitizer build) and
// between OpenBLAS's kernels, while the bound does not. The exact value goes into the lesson's
// result for the tests. One step's gradient is held to 1e-06; twenty steps' losses to 1e-05,
// because each step's rounding feeds the next (a sanitizer build on OpenBLAS's Haswell kernels
// reached 1.03e-06 for 4 x 2 accumulation, other builds and kernels stayed under 1e-06).
static std::string rounding_level(std::ostream& out, double diff, double bound) {
  if (diff < bound) {
    const std::string en = "below " + fmt_sci(bound, 0), zh = "小于 " + fmt_sci(bound, 0);
    return tr(out, en.c_str(), zh.c_str());
  }
  return fmt_sci(diff, 2);
}

namespace {

// A tiny GPT on the built-in Markov corpus, `batch` rows per micro-batch, `accum` per step.
Config tiny_run(const std::string& name, int64_t batch, int64_t accum, int64_t steps) {
  Config c;
  c.data.dataset = Dataset::synthetic;
  c.data.corpus_tokens = 20000;
  c.model.n_layer = 2;
  c.model.n_head = 2;
  c.model.n_embd = 32;
  c.model.block_size = 16;
  c.optim.lr = 1e-2;
  c.schedule.warmup_steps = steps > 4 ? 4 : 0;
  c.schedule.min_lr = 1e-3;
  c.train.steps = steps;
  c.train.batch_size = batch;
  c.train.grad_accum_steps = accum;
  c.train.eval_interval = steps;
  c.train.eval_iters = 2;
  c.train.samples = 0;
  c.train.threads = 1;
  c.train.seed = 7;
  // One folder per process: two runs of the lesson at once (ctest -j) must not share a run folder.
  c.output.run_dir =
      (std::filesystem::temp_directory_path() / ("sf_lesson_18-" + std::to_string(::getpid())) / name).string();
  c.output.overwrite = true;
  c.output.plot = false;
  c.output.save_best = false;
  validate_config(c);
  return c;
}

std::vector<double> losses_of(const Config& c) {
  std::ostringstream quiet;
  TrainOptions o;
  o.out = &quiet;
  std::vector<double> losses = train(c, o).losses;
  std::filesystem::remove_all(c.output.run_dir);  // only the losses are kept
  std::error_code ec;
  std::filesystem::remove(std::filesystem::path(c.output.run_dir).parent_path(), ec);  // once empty
  return losses;
}

double max_relative(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]) / std::abs(b[i]));
  return worst;
}

// Every gradient element of a model, one after the other.
std::vector<double> flat_grads(Module& m) {
  std::vector<double> g;
  for (const auto& [name, p] : m.named_parameters()) {
    Tensor d = p.grad();
    for (int64_t i = 0; i < p.numel(); ++i) g.push_back(d.defined() ? d.data<float>()[i] : 0.0);
  }
  return g;
}

// GPT-2 small's shape (124M parameters), for the cost model.
Config gpt2_small() {
  Config c;
  c.model.n_layer = 12;
  c.model.n_head = 12;
  c.model.n_embd = 768;
  c.model.block_size = 1024;
  c.model.bias = true;
  c.model.tie_weights = true;
  c.train.batch_size = 1;
  return c;
}

// A network link of the cost model (steps 4 and 5): bandwidth and latency per hop.
struct Link {
  const char* name;
  double bytes_per_s, alpha;
};
const std::vector<Link> kLinks = {{"Ethernet 25 Gb/s", 25e9 / 8, 5e-6},
                                  {"InfiniBand 100 Gb/s", 100e9 / 8, 5e-6},
                                  {"InfiniBand 200 Gb/s", 200e9 / 8, 5e-6},
                                  {"InfiniBand 400 Gb/s", 400e9 / 8, 5e-6},
                                  {"NVLink 300 GB/s", 300e9, 1e-6}};

}  // namespace

// Step 1: the mean of two micro-batches' gradients against one batch of eight.
static void scaling_mean_gradient(std::ostream& out, ScalingOutResult& r) {
  heading(out, 1, "The mean of micro-batch gradients is the big batch's gradient", "微批次梯度的平均就是大批次的梯度");
  // The loss of a batch is the mean over its rows, so its gradient is the mean of the rows'
  // gradients: cut the batch into M equal micro-batches and the mean of their M gradients is the
  // same number. Two tasks with the same seed hold the same weights and draw the same 8 windows.
  // [excerpt: mean]
  std::unique_ptr<Task> big = make_task(tiny_run("grad_big", 8, 1, 1));  // one batch of 8
  big->next_batch();
  big->micro_batch_loss(0).backward();
  std::vector<double> g_big = flat_grads(big->model());

  std::unique_ptr<Task> micro = make_task(tiny_run("grad_micro", 4, 2, 1));  // 2 micro-batches of 4
  micro->next_batch();                                                       // the same 8 windows, rows 0-3 and 4-7
  NamedParameters params = micro->model().named_parameters();
  dist::GradientSum sum(params);
  for (int64_t k = 0; k < 2; ++k) {
    micro->model().zero_grad();
    micro->micro_batch_loss(k).backward();
    sum.add_micro_batch();
  }
  sum.finish(2);  // .grad = (g_0 + g_1) / 2
  std::vector<double> g_mean = flat_grads(micro->model());
  // [/excerpt]
  double largest = 0;
  for (double g : g_big) largest = std::max(largest, std::abs(g));
  r.gradient_elements = static_cast<int64_t>(g_big.size());
  r.gradient_diff = max_abs_diff(g_big, g_mean) / largest;
  out << tr(out, "gradient elements: ", "梯度元素个数：") << r.gradient_elements << "\n"
      << tr(out, "largest |mean of 2 micro-batches - batch of 8|, relative to the largest gradient: ",
            "2 个微批次的平均与 8 行大批次之差的最大绝对值（相对于最大的梯度）：")
      << rounding_level(out, r.gradient_diff, 1e-6) << "\n"
      << tr(out, "(float32 epsilon is 1.19e-07: the same sum, added in another order)\n",
            "（float32 的机器精度是 1.19e-07：同一个和，只是相加的顺序不同）\n");
}

// Step 2: twenty steps with accumulation against one big batch.
static void scaling_accumulation(std::ostream& out, ScalingOutResult& r) {
  heading(out, 2, "Twenty steps: accumulation against one big batch", "二十步训练：梯度累积与一个大批次");
  const int64_t steps = 20;
  r.big = losses_of(tiny_run("big", 8, 1, steps));
  r.accum2 = losses_of(tiny_run("accum2", 4, 2, steps));
  r.accum4 = losses_of(tiny_run("accum4", 2, 4, steps));
  r.small = losses_of(tiny_run("small", 4, 1, steps));  // a step per batch of 4: another run
  out << tr(out, "step   batch 8     2 x 4 accumulated   4 x 2 accumulated   batch 4, no accumulation\n",
            "步数   批次 8      2 × 4 累积          4 × 2 累积          批次 4，不累积\n");
  for (int64_t s : {1, 5, 10, 20})
    out << "  " << s << std::string(s < 10 ? 4 : 3, ' ') << fmt(r.big[s - 1], 4) << "      " << fmt(r.accum2[s - 1], 4)
        << "              " << fmt(r.accum4[s - 1], 4) << "              " << fmt(r.small[s - 1], 4) << "\n";
  r.accum2_diff = max_relative(r.accum2, r.big);
  r.accum4_diff = max_relative(r.accum4, r.big);
  r.small_diff = max_relative(r.small, r.big);
  out << tr(out, "largest relative difference from batch 8 over the 20 steps: 2 x 4 ",
            "与批次 8 相比，20 步中的最大相对差：2 × 4 累积：")
      << rounding_level(out, r.accum2_diff, 1e-5) << tr(out, ", 4 x 2 ", "；4 × 2 累积：")
      << rounding_level(out, r.accum4_diff, 1e-5) << tr(out, ", batch 4 without accumulation ", "；不累积的批次 4：")
      << fmt_sci(r.small_diff, 2) << "\n";
}

// Step 3: a ring all-reduce simulated on four ranks.
static void scaling_ring(std::ostream& out, ScalingOutResult& r) {
  heading(out, 3, "A ring all-reduce, simulated: what each rank sends", "模拟一次环形 all-reduce：每个 rank 发送多少");
  // N ranks in a ring, each with a buffer of N chunks. Reduce-scatter: in N - 1 steps each rank
  // passes one chunk to its right neighbour, which adds it to its own; then rank r holds the full
  // sum of chunk r + 1. All-gather: N - 1 more steps pass the finished chunks around.
  const int N = 4, chunk = 2, n = N * chunk;
  std::vector<std::vector<double>> buf(N, std::vector<double>(n));
  std::vector<double> expected(n, 0.0);
  for (int rank = 0; rank < N; ++rank)
    for (int i = 0; i < n; ++i) expected[i] += buf[rank][i] = (rank + 1) * 10 + i;
  int64_t sent = 0;  // elements sent by rank 0
  // [excerpt: ring]
  for (int s = 0; s < N - 1; ++s) {  // reduce-scatter
    std::vector<std::vector<double>> before = buf;
    for (int rank = 0; rank < N; ++rank) {
      int c = ((rank - s) % N + N) % N, to = (rank + 1) % N;  // rank sends chunk c to its right
      for (int i = c * chunk; i < (c + 1) * chunk; ++i) buf[to][i] += before[rank][i];
      if (rank == 0) sent += chunk;
    }
  }
  for (int s = 0; s < N - 1; ++s) {  // all-gather
    std::vector<std::vector<double>> before = buf;
    for (int rank = 0; rank < N; ++rank) {
      int c = ((rank + 1 - s) % N + N) % N, to = (rank + 1) % N;  // a finished chunk moves on
      for (int i = c * chunk; i < (c + 1) * chunk; ++i) buf[to][i] = before[rank][i];
      if (rank == 0) sent += chunk;
    }
  }
  // [/excerpt]
  r.ring_error = 0;
  for (int rank = 0; rank < N; ++rank) r.ring_error = std::max(r.ring_error, max_abs_diff(buf[rank], expected));
  r.ring_sent_fraction = static_cast<double>(sent) / n;
  out << tr(out, "4 ranks, 8 values each; every rank ends with the sums: ",
            "4 个 rank，每个 8 个数；最后每个 rank 都得到这些和：")
      << fmt_vec(buf[3], 0) << "\n"
      << tr(out, "largest error on any rank: ", "各 rank 上的最大误差：") << fmt(r.ring_error, 0) << "\n"
      << tr(out, "values sent by each rank: ", "每个 rank 发送的数值：") << sent << tr(out, " of its ", "，它自己有 ")
      << n << tr(out, " = ", " 个，比例 = ") << fmt(r.ring_sent_fraction, 3)
      << " = 2(N-1)/N = " << fmt(2.0 * (N - 1) / N, 3) << "\n"
      << tr(out, "2(N-1)/N for N = 2, 8, 64, 1024: ", "2(N-1)/N 在 N = 2、8、64、1024 时：");
  for (int ranks : {2, 8, 64, 1024}) out << fmt(2.0 * (ranks - 1) / ranks, 3) << " ";
  out << tr(out, "(it never passes 2: the bytes per rank barely grow with N)\n",
            "（永远不超过 2：每个 rank 的字节数几乎不随 N 增长）\n");
}

// Step 4: the all-reduce's cost model on five links; returns its formula for step 5.
static auto scaling_allreduce_cost(std::ostream& out, ScalingOutResult& r) {
  heading(out, 4, "What an all-reduce of the gradients costs: a model, not a measurement",
          "梯度 all-reduce 的代价：一个模型，不是测量");
  // t = 2 (N - 1) alpha + 2 (N - 1) / N * bytes / bandwidth: per step a latency alpha, plus the
  // bytes the ring sends per rank at the link's bandwidth. Assumed: float32 gradients, no overlap
  // with the backward, alpha = 5 us per hop (NVLink 1 us).
  Config ours = load_config(std::string(SF_SOURCE_DIR) + "/configs/default.json");
  r.default_params = estimate_model_size(ours, 65).parameters;  // 65 characters in Tiny Shakespeare
  r.gpt2_params = estimate_model_size(gpt2_small(), 50257).parameters;
  auto pad = [](const std::string& s, int width) {  // by display width, and at least one space
    return display_width(s) < width ? pad_right(s, width) : s + " ";
  };
  const std::vector<int> gpus = {8, 64, 256, 1024};
  // [excerpt: cost]
  auto allreduce_seconds = [](double bytes, int N, const Link& l) {
    return 2.0 * (N - 1) * l.alpha + 2.0 * (N - 1) / N * bytes / l.bytes_per_s;
  };
  // [/excerpt]
  for (int model = 0; model < 2; ++model) {
    const int64_t P = model == 0 ? r.default_params : r.gpt2_params;
    const double bytes = 4.0 * static_cast<double>(P);
    out << (model == 0 ? tr(out, "our default model: ", "我们的默认模型：") : tr(out, "GPT-2 small: ", "GPT-2 small："))
        << P << tr(out, " parameters, ", " 个参数，") << fmt(bytes / 1e6, 1)
        << tr(out, " MB of gradients; ms per all-reduce\n", " MB 梯度；每次 all-reduce 的毫秒数\n");
    auto print_row = [&](std::string row) {  // without trailing spaces
      row.erase(row.find_last_not_of(' ') + 1);
      out << row << "\n";
    };
    std::string row = "  " + pad(tr(out, "link", "链路"), 21);
    for (int N : gpus) row += pad("N=" + std::to_string(N), 10);
    print_row(row);
    for (const Link& l : kLinks) {
      row = "  " + pad(l.name, 21);
      for (int N : gpus) {
        double ms = 1e3 * allreduce_seconds(bytes, N, l);
        (model == 0 ? r.default_ms : r.gpt2_ms).push_back(ms);
        row += pad(fmt(ms, ms < 10 ? 2 : 1), 10);
      }
      print_row(row);
    }
  }
  return allreduce_seconds;
}

// Step 5: GPT-2 small over more and more GPUs, and the memory that ZeRO shards.
template <class Cost>
static void scaling_limits(std::ostream& out, ScalingOutResult& r, const Cost& allreduce_seconds) {
  heading(out, 5, "Where data parallelism stops helping", "数据并行在哪里不再有用");
  // GPT-2 small with a fixed global batch of 512 sequences of 1024 tokens (about 0.5M tokens, as
  // GPT-2 used), split over N GPUs. Compute: 6 * params * tokens FLOPs at an assumed 100 TFLOP/s
  // per GPU; communication: the all-reduce above on InfiniBand 200 Gb/s, not overlapped.
  const double tokens = 512.0 * 1024.0, flops = 100e12;
  out << tr(out, "GPT-2 small, global batch 512 x 1024 tokens, 100 TFLOP/s per GPU, InfiniBand 200 Gb/s:\n",
            "GPT-2 small，全局批次 512 x 1024 个词元，每个 GPU 100 TFLOP/s，InfiniBand 200 Gb/s：\n")
      << tr(out, "  GPUs   sequences/GPU   compute ms   all-reduce ms   share in all-reduce\n",
            "  GPU 数  每 GPU 序列数    计算毫秒     all-reduce 毫秒  all-reduce 所占比例\n");
  for (int N : {8, 64, 256, 512}) {
    double compute_ms = 1e3 * 6.0 * static_cast<double>(r.gpt2_params) * tokens / N / flops;
    double comm_ms = 1e3 * allreduce_seconds(4.0 * static_cast<double>(r.gpt2_params), N, kLinks[2]);
    r.dp_share.push_back(comm_ms / (compute_ms + comm_ms));
    std::string a = std::to_string(N), b = std::to_string(512 / N), c = fmt(compute_ms, 1), d = fmt(comm_ms, 1);
    out << "  " << a << std::string(7 - a.size(), ' ') << b << std::string(16 - b.size(), ' ') << c
        << std::string(13 - c.size(), ' ') << d << std::string(16 - d.size(), ' ') << fmt(100 * r.dp_share.back(), 0)
        << "%\n";
  }
  out << tr(out, "at 512 GPUs each holds one sequence: the batch cannot be cut further\n",
            "到 512 个 GPU 时每个 GPU 只剩一个序列：批次无法再切分\n");
  // Memory per GPU: data parallelism keeps a full copy of weights (4 bytes per parameter),
  // gradients (4) and Adam's two moments (8) on every rank; ZeRO shards them over the N ranks.
  const double P = static_cast<double>(r.gpt2_params), ranks = 64;
  r.memory_gb = {16 * P / 1e9, (8 * P + 8 * P / ranks) / 1e9, (4 * P + 12 * P / ranks) / 1e9, 16 * P / ranks / 1e9};
  out << tr(out, "memory per GPU for GPT-2 small's float32 training state on 64 GPUs (GB):\n",
            "GPT-2 small 的 float32 训练状态放在 64 个 GPU 上时，每个 GPU 的内存（GB）：\n")
      << tr(out, "  data parallel ", "  数据并行 ") << fmt(r.memory_gb[0], 2)
      << tr(out, ", ZeRO-1 (Adam moments sharded) ", "，ZeRO-1（切分 Adam 的矩估计）") << fmt(r.memory_gb[1], 2)
      << tr(out, ", ZeRO-2 (+ gradients) ", "，ZeRO-2（再切分梯度）") << fmt(r.memory_gb[2], 2)
      << tr(out, ", ZeRO-3 (+ weights) ", "，ZeRO-3（再切分权重）") << fmt(r.memory_gb[3], 3) << "\n";
}

ScalingOutResult run_lesson_scaling_out(std::ostream& out) {
  ScalingOutResult r;
  scaling_mean_gradient(out, r);
  scaling_accumulation(out, r);
  scaling_ring(out, r);
  const auto allreduce_seconds = scaling_allreduce_cost(out, r);
  scaling_limits(out, r, allreduce_seconds);
  return r;
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_scaling_out() {
  return {"scaling-out", "Scaling out: accumulation = a bigger batch, the ring all-reduce, its cost at 1024 GPUs",
          "横向扩展：梯度累积等于更大的批次、环形 all-reduce、1024 个 GPU 时的代价", printing(run_lesson_scaling_out)};
}

}  // namespace sf::lessons

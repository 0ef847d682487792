// bench_attention.cpp: what the tiled attention kernel (online softmax) saves against the stored-
// probabilities kernel, in memory and in time (issue 20).
//
//   1. A training step at T = 1024, 2048, 4096, each path in turn: forward + backward of causal
//      attention_packed alone (B 2, H 4, D 32), and of a small GPT (2 layers, C 128, 4 heads,
//      B 1). Each measurement runs in a child process of its own (this program again, with
//      --child), which prints its best time of 3 steps and its peak resident memory
//      (getrusage's ru_maxrss) after one step, and before the first (inputs and model only):
//      the difference is what the step itself needed.
//   2. Time only, in this process: causal attention_packed forward + backward at the short rows
//      and small heads of the default models (T 32 ... 1024, D 16, 32, 64, B 2, H 4), the
//      measurements behind attention_kernel_for (AttentionKernel::automatic).
//
//   cmake --build build --target bench_attention && build/bench/bench_attention [--short-rows]
// Not run by the tests. Threads: all cores unless SF_NUM_THREADS says otherwise.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/startup.h"
#include "autograd/cpu/threads.h"
#include "autograd/ops.h"
#include "autograd/ops_attention.h"
#include "nn/gpt.h"

using namespace sf;
using Clock = std::chrono::steady_clock;

namespace {

double peak_rss_mib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// Best wall time of f over `runs` calls, in milliseconds.
double best_ms(const std::function<void()>& f, int runs) {
  double best = 1e300;
  for (int r = 0; r < runs; ++r) {
    auto start = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return best;
}

// One training step of attention_packed: forward, a scalar loss, backward.
void attention_step(const Tensor& qkv0, int64_t H, AttentionKernel kernel) {
  AttentionOptions opt;
  opt.causal = true;
  opt.kernel = kernel;
  Tensor qkv = qkv0.detach().requires_grad_();
  sum(attention_packed(qkv, H, opt)).backward();
}

GPTConfig small_gpt(int64_t T, AttentionKernel kernel) {
  GPTConfig c;
  c.vocab_size = 65;
  c.block_size = T;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_embd = 128;
  c.attention = kernel;
  return c;
}

// --child op|gpt stored|tiled T: prints "ms before_mib peak_mib".
int child(const std::string& what, AttentionKernel kernel, int64_t T) {
  Generator gen(1);
  std::function<void()> step;
  Tensor qkv;
  std::unique_ptr<GPT> model;
  IntTensor idx, targets;
  if (what == "op") {
    qkv = Tensor::randn({2, T, 3 * 128}, gen, 1.0);  // (B, T, 3C), H = 4, D = 32
    step = [&] { attention_step(qkv, 4, kernel); };
  } else {
    model = std::make_unique<GPT>(small_gpt(T, kernel));
    std::vector<int32_t> ids(static_cast<size_t>(T + 1));
    for (auto& id : ids) id = static_cast<int32_t>(gen.uniform() * 65) % 65;
    idx = IntTensor({1, T}, std::vector<int32_t>(ids.begin(), ids.end() - 1));
    targets = IntTensor({1, T}, std::vector<int32_t>(ids.begin() + 1, ids.end()));
    step = [&] {
      model->zero_grad();
      model->loss(idx, targets).backward();
    };
  }
  const double before = peak_rss_mib();
  step();  // warm-up, and the peak
  const double peak = peak_rss_mib();
  const double ms = best_ms(step, 3);
  std::printf("%.2f %.1f %.1f\n", ms, before, peak);
  return 0;
}

struct ChildResult {
  double ms = 0, before = 0, peak = 0;
};

ChildResult run_child(const std::string& what, AttentionKernel kernel, int64_t T) {
  const std::string cmd = "/proc/" + std::to_string(getpid()) + "/exe --child " + what + " " +
                          attention_kernel_name(kernel) + " " + std::to_string(T);
  ChildResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p || std::fscanf(p, "%lf %lf %lf", &r.ms, &r.before, &r.peak) != 3) {
    std::fprintf(stderr, "bench_attention: child `%s` failed\n", cmd.c_str());
    std::exit(1);
  }
  pclose(p);
  return r;
}

void training_steps() {
  std::printf("1. training step, causal, each in its own process (peak RSS: ru_maxrss)\n");
  std::printf("%-28s %6s %8s %10s %10s %10s %8s\n", "what", "T", "kernel", "ms", "peak MiB", "step MiB", "speed");
  for (const char* what : {"op", "gpt"})
    for (int64_t T : {1024, 2048, 4096}) {
      ChildResult stored = run_child(what, AttentionKernel::stored, T);  // taking turns
      ChildResult tiled = run_child(what, AttentionKernel::tiled, T);
      const char* name = std::strcmp(what, "op") == 0 ? "attention_packed B2 H4 D32" : "GPT 2x128, 4 heads, B1";
      for (auto [kernel, r] : {std::pair{"stored", stored}, std::pair{"tiled", tiled}})
        std::printf("%-28s %6ld %8s %10.1f %10.1f %10.1f %7.2fx\n", name, static_cast<long>(T), kernel, r.ms, r.peak,
                    r.peak - r.before, stored.ms / r.ms);
      std::fflush(stdout);
    }
}

void short_rows() {
  std::printf("\n2. causal attention_packed forward + backward, B 2, H 4 (best of 5 after a warm-up)\n");
  std::printf("%6s %4s %12s %12s %12s %s\n", "T", "D", "stored ms", "tiled ms", "stored/tiled", "auto picks");
  for (int64_t D : {16, 32, 64})
    for (int64_t T : {32, 64, 128, 256, 512, 1024}) {
      Generator gen(2);
      Tensor qkv = Tensor::randn({2, T, 3 * 4 * D}, gen, 1.0);
      const int reps = static_cast<int>(std::max<int64_t>(1, 4096 * 64 / (T * T) * 4));  // ~ equal work
      auto timed = [&](AttentionKernel k) {
        attention_step(qkv, 4, k);
        return best_ms(
                   [&] {
                     for (int i = 0; i < reps; ++i) attention_step(qkv, 4, k);
                   },
                   5) /
               reps;
      };
      const double s = timed(AttentionKernel::stored), t = timed(AttentionKernel::tiled);
      std::printf("%6ld %4ld %12.3f %12.3f %12.2f %s\n", static_cast<long>(T), static_cast<long>(D), s, t, s / t,
                  attention_kernel_name(attention_kernel_for(T, T, D)));
      std::fflush(stdout);
    }
}

}  // namespace

int main(int argc, char** argv) {
  sf::start_program(argv);  // first: the BLAS kernels for this CPU (app/startup.h)
  init_threads_from_env();
  if (argc == 5 && std::string(argv[1]) == "--child")
    return child(argv[2], parse_named(kAttentionKernels, argv[3], "bench_attention --child"), std::atoll(argv[4]));
  std::printf("bench_attention: %d threads\n\n", num_threads());
  const bool only_short = argc == 2 && std::string(argv[1]) == "--short-rows";  // section 2 only
  if (!only_short) training_steps();
  short_rows();
  return 0;
}

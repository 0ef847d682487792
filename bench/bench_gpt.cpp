// bench_gpt.cpp: training-step speed of a GPT-2-style model, side by side with PyTorch.
//
// The model and the timed step match bench/torch_gpt_bench.py (the PyTorch 1.13
// reference): token + learned position embeddings, Pre-LN blocks, causal attention, GELU (tanh
// form), tied LM head, biases everywhere, init N(0, 0.02), no dropout; one step = zero_grad +
// forward + cross-entropy + backward + clip_grad_norm(1.0) + AdamW(lr 3e-4, wd 0) step, on
// seeded random tokens generated before timing.
//
//   bench_gpt                      all three shapes, each in its own process (peak RSS per
//                                  shape), plus the PyTorch reference when python3-torch exists
//   bench_gpt --shape small        one shape; prints one JSON object
//   options: --steps N --warmup-steps N --threads N --precision fp32|fp16|bf16 --no-reference
//            --no-limit (skip the sgemm limit: for profiling one shape's steps alone)
//            --breakdown (with --shape: after the timed steps, as many steps again with job timing
//            on, and a table on stderr of where their time went: ms per step for each op's
//            parallel work, forward and backward apart, and the serial rest)
//            --reference PATH (default bench/torch_gpt_bench.py)
//            --rounds N (default 3): per shape, ours and the reference run N times in turn and
//            the table shows the median over the rounds. These machines drift by 10-20% over
//            minutes; taking turns puts both frameworks under the same drift.
//
// FLOPs/token = 6 N + 12 L T d (nanoGPT's estimate_mfu; N excludes the position table).
//
// The machine's own limit, measured in the same child right after our steps: sgemm with the same
// number of threads on every matrix product of the model's linear layers, forward (Y = X W^T)
// and both backward products (dX = dY W, dW = dY^T X), each product as often as the step does it
// (n_layer times for a block's layers, once for the tied LM head). Each product is timed two
// ways, OpenBLAS threading it itself and our pool splitting it over single-threaded OpenBLAS
// calls (blas::gemm_parallel, what the step uses), and the faster counts. Their summed FLOPs over
// their summed times is the limit: what the step would reach if it did nothing but these
// products at the best sgemm speed on this machine. "share" = our achieved GFLOP/s / the limit.
// "cold" times the same products on the pool with each call's operands out of cache (the next of
// several copies, about 64 MiB together), as a step meets them: the products alone then run
// 5-15% below the limit, which no step can beat without beating OpenBLAS. Printed as context
// ("of cold" = GFLOP/s / cold); the targets stay on the limit.
#include <cblas.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/cpu/blas.h"
#include "autograd/cpu/lowp.h"
#include "autograd/cpu/threads.h"
#include "bench/bench_common.h"
#include "nn/gpt.h"
#include "optim/adam.h"
#include "optim/clip.h"

using namespace sf;
using json = nlohmann::json;
using sf::bench::median;
using sf::bench::run_json;

struct Shape6 {
  int64_t vocab, d, layers, heads, T, B;
};
static const std::map<std::string, Shape6> kShapes = {
    {"tiny", {65, 64, 2, 4, 32, 32}},
    {"small", {65, 128, 4, 4, 128, 16}},
    {"medium", {65, 384, 6, 6, 256, 8}},
};

// (wall seconds, machine busy CPU-seconds from /proc/stat, this process's CPU-seconds)
struct CpuSnapshot {
  double wall, busy, own;
};
static CpuSnapshot cpu_snapshot() {
  CpuSnapshot s{std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(), 0, 0};
  std::ifstream stat("/proc/stat");
  std::string cpu;
  double v[8] = {0};
  stat >> cpu;
  for (double& x : v) stat >> x;
  double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  s.busy = (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / tick;
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  s.own = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
  return s;
}

extern "C" void openblas_set_num_threads(int);

// Seconds of the fastest of `repeats` timed runs of f (each run long enough to time: f is called
// until 20 ms have passed and the time per call is kept).
template <class F>
static double best_seconds(F&& f, int repeats = 5) {
  f();  // warm caches and OpenBLAS's threads
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    int calls = 0;
    double elapsed = 0;
    do {
      f();
      ++calls;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } while (elapsed < 0.02);
    best = std::min(best, elapsed / calls);
  }
  return best;
}

// Seconds per call of call(o) when each call takes the next of `sets` copies of its operands,
// together well over the caches, as a training step meets a product's operands (written by other
// ops since this product last ran): the best of 3 passes over all the copies.
template <class Set, class F>
static double cold_seconds(std::vector<Set>& sets, F&& call) {
  double best = 1e30;
  for (int pass = 0; pass < 3; ++pass) {
    auto t0 = std::chrono::steady_clock::now();
    for (Set& o : sets) call(o);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                              static_cast<double>(sets.size()));
  }
  return best;
}

// The sgemm limit for shape s on `threads` OpenBLAS threads (see the header).
static json sgemm_limit(const Shape6& s, int threads) {
  struct Linear {
    const char* name;
    int64_t in, out, count;  // W is (out, in); `count` such layers in one step
  };
  const int64_t M = s.B * s.T, d = s.d;
  const std::array<Linear, 5> layers = {{{"qkv", d, 3 * d, s.layers},
                                         {"attn proj", d, d, s.layers},
                                         {"fc", d, 4 * d, s.layers},
                                         {"fc proj", 4 * d, d, s.layers},
                                         {"lm head", d, s.vocab, 1}}};
  Generator gen(7);
  auto random = [&](int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = static_cast<float>(gen.uniform() - 0.5);
    return v;
  };
  double flops = 0, seconds = 0, cold_total = 0;
  json products = json::array();
  for (const Linear& l : layers) {
    std::vector<float> X = random(M * l.in), W = random(l.out * l.in), dY = random(M * l.out);
    std::vector<float> Y(static_cast<size_t>(M * l.out)), dX(static_cast<size_t>(M * l.in)),
        dW(static_cast<size_t>(l.out * l.in));
    const int m = static_cast<int>(M), in = static_cast<int>(l.in), out = static_cast<int>(l.out);
    // C (rows, cols) = op(A) op(B), timed with OpenBLAS's threads and with our pool's split.
    auto fastest = [&](bool ta, bool tb, int rows, int cols, int inner, const float* A, int lda, const float* B,
                       int ldb, float* C) {
      openblas_set_num_threads(threads);
      double own = best_seconds([&] {
        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, rows, cols, inner,
                    1.f, A, lda, B, ldb, 0.f, C, cols);
      });
      openblas_set_num_threads(1);  // as the rest of the program runs it (autograd/cpu/threads.cpp)
      double pool = best_seconds(
          [&] { blas::gemm_parallel<float>(ta, tb, rows, cols, inner, 1.f, A, lda, B, ldb, 0.f, C, cols); });
      return std::min(own, pool);
    };
    double forward = fastest(false, true, m, out, in, X.data(), in, W.data(), in, Y.data());         // Y = X W^T
    double input_grad = fastest(false, false, m, in, out, dY.data(), out, W.data(), in, dX.data());  // dX = dY W
    double weight_grad = fastest(true, false, out, in, m, dY.data(), out, X.data(), in, dW.data());  // dW = dY^T X
    // The same three products on the pool with operands out of cache (context for the share, not
    // the limit): copies of all six arrays, at least 2 and up to 16, about 64 MiB together.
    struct Operands {
      std::vector<float> X, W, dY, Y, dX, dW;
    };
    const double set_bytes = 4.0 * static_cast<double>(2 * M * l.in + 2 * M * l.out + 2 * l.in * l.out);
    std::vector<Operands> sets(static_cast<size_t>(std::clamp((64.0 * (1 << 20)) / set_bytes, 2.0, 16.0)),
                               Operands{X, W, dY, Y, dX, dW});
    const double cold[3] = {cold_seconds(sets,
                                         [&](Operands& o) {
                                           blas::gemm_parallel<float>(false, true, m, out, in, 1.f, o.X.data(), in,
                                                                      o.W.data(), in, 0.f, o.Y.data(), out);
                                         }),
                            cold_seconds(sets,
                                         [&](Operands& o) {
                                           blas::gemm_parallel<float>(false, false, m, in, out, 1.f, o.dY.data(), out,
                                                                      o.W.data(), in, 0.f, o.dX.data(), in);
                                         }),
                            cold_seconds(sets, [&](Operands& o) {
                              blas::gemm_parallel<float>(true, false, out, in, m, 1.f, o.dY.data(), out, o.X.data(), in,
                                                         0.f, o.dW.data(), in);
                            })};
    const double product_flops = 2.0 * static_cast<double>(M * l.in * l.out);
    for (double t : {forward, input_grad, weight_grad}) {
      flops += product_flops * static_cast<double>(l.count);
      seconds += t * static_cast<double>(l.count);
    }
    for (double t : cold) cold_total += t * static_cast<double>(l.count);
    products.push_back(
        {{"layer", l.name},
         {"M", M},
         {"in", l.in},
         {"out", l.out},
         {"count", l.count},
         {"gflops",
          {product_flops / forward / 1e9, product_flops / input_grad / 1e9, product_flops / weight_grad / 1e9}},
         {"cold_gflops",
          {product_flops / cold[0] / 1e9, product_flops / cold[1] / 1e9, product_flops / cold[2] / 1e9}}});
  }
  return json{
      {"limit_gflops", flops / seconds / 1e9}, {"cold_gflops", flops / cold_total / 1e9}, {"products", products}};
}

// "model name" and the widest SIMD of this machine's first CPU, from /proc/cpuinfo.
static std::string cpu_description() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown CPU", flags;
  while (std::getline(in, line)) {
    auto value = [&] { return line.substr(line.find(':') + 2); };
    if (line.rfind("model name", 0) == 0 && model == "unknown CPU") model = value();
    if (line.rfind("flags", 0) == 0 && flags.empty()) flags = " " + value() + " ";
  }
  std::string simd = flags.find(" avx512f ") != std::string::npos ? "AVX-512"
                     : flags.find(" avx2 ") != std::string::npos  ? "AVX2"
                                                                  : "no AVX2";
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  return model + ", " + simd + ", " + std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + " cores; OpenBLAS kernels " +
         sf::blas::core_name() + (forced ? " (OPENBLAS_CORETYPE, the reference too)" : "");
}

// `steps` steps with job timing on (autograd/cpu/threads.h), after the timed ones: where each
// step's time goes, per label, in ms per step. Printed as a table on stderr, returned as JSON.
template <class Step>
static json breakdown(const std::string& name, int steps, Step&& step) {
  take_job_times();  // drop anything recorded before
  set_job_timing(true);
  double total = 0;  // seconds over all steps
  for (int i = 0; i < steps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    step(i);
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  set_job_timing(false);
  const std::vector<JobTime> table = take_job_times();
  double in_table = 0;
  const double per_step = 1e3 / steps;  // seconds over all steps -> ms per step
  json rows = json::array();
  std::fprintf(stderr, "where a step's time goes (%s, %d steps with job timing on, %.2f ms per step):\n", name.c_str(),
               steps, total * per_step);
  std::fprintf(stderr, "  %-28s %9s %7s %10s %10s %12s\n", "label (parallel_for calls)", "ms/step", "share",
               "jobs/step", "inline/st", "waited ms/st");
  for (const JobTime& t : table) {
    in_table += t.seconds;
    std::fprintf(stderr, "  %-28s %9.3f %6.1f%% %10.1f %10.1f %12.3f\n", t.label.c_str(), t.seconds * per_step,
                 100 * t.seconds / total, double(t.jobs) / steps, double(t.inline_calls) / steps, t.waited * per_step);
    rows.push_back({{"label", t.label},
                    {"ms_per_step", t.seconds * per_step},
                    {"jobs_per_step", double(t.jobs) / steps},
                    {"inline_per_step", double(t.inline_calls) / steps},
                    {"waited_ms_per_step", t.waited * per_step}});
  }
  const double outside = total - in_table;
  std::fprintf(stderr, "  %-28s %9.3f %6.1f%%   (serial work between the calls)\n", "outside parallel_for",
               outside * per_step, 100 * outside / total);
  std::fflush(stderr);
  return json{
      {"steps", steps}, {"step_ms", total * per_step}, {"outside_ms_per_step", outside * per_step}, {"rows", rows}};
}

static json run_one(const std::string& name, const Shape6& s, int steps, int warmup, Precision precision,
                    bool measure_limit, bool with_breakdown) {
  GPTConfig c;
  c.vocab_size = s.vocab;
  c.block_size = s.T;
  c.n_layer = s.layers;
  c.n_head = s.heads;
  c.n_embd = s.d;
  c.activation = Activation::gelu_tanh;
  c.seed = 1337;
  GPT model(c);
  model.train();
  auto params = model.named_parameters();
  AdamOptions ao;
  ao.lr = 3e-4;
  AdamW opt(params, ao);
  int64_t n_params = model.num_parameters();
  int64_t flops_per_token = 6 * (n_params - s.T * s.d) + 12 * s.layers * s.T * s.d;

  Generator gen(1338);
  int total = warmup + steps;
  std::vector<IntTensor> xs, ys;
  for (int i = 0; i < total; ++i) {
    IntTensor x({s.B, s.T}, std::vector<int32_t>(static_cast<size_t>(s.B * s.T)));
    IntTensor y = x;
    for (int64_t j = 0; j < x.numel(); ++j) {
      x[j] = static_cast<int32_t>(gen.randint(s.vocab));
      y[j] = static_cast<int32_t>(gen.randint(s.vocab));
    }
    xs.push_back(std::move(x));
    ys.push_back(std::move(y));
  }

  auto train_step = [&](int i) {  // one step on batch i; returns the loss
    opt.zero_grad();
    Tensor loss;
    {
      AutocastGuard autocast(precision);
      loss = model.loss(xs[static_cast<size_t>(i)], ys[static_cast<size_t>(i)]);
      loss.backward();
    }
    clip_grad_norm(params, 1.0);
    opt.step();
    return loss;
  };
  std::vector<double> times;
  CpuSnapshot snap0{};
  double last_loss = 0;
  for (int step = 0; step < total; ++step) {
    if (step == warmup) snap0 = cpu_snapshot();
    auto t0 = std::chrono::steady_clock::now();
    Tensor loss = train_step(step);
    auto t1 = std::chrono::steady_clock::now();
    last_loss = loss.item();
    if (step >= warmup) times.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  CpuSnapshot snap1 = cpu_snapshot();
  double wall = snap1.wall - snap0.wall;
  double foreign = ((snap1.busy - snap0.busy) - (snap1.own - snap0.own)) / wall;
  std::sort(times.begin(), times.end());
  size_t n = times.size();
  double med = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  double tokens = static_cast<double>(s.B * s.T);
  double achieved = static_cast<double>(flops_per_token) * tokens / med / 1e9;
  json limit = measure_limit ? sgemm_limit(s, num_threads())
                             : json{{"limit_gflops", 0.0}, {"cold_gflops", 0.0}, {"products", json::array()}};
  // After the timed steps and the limit: the timing costs a little per call and must not touch them.
  json where = with_breakdown ? breakdown(name, steps, [&](int i) { train_step(warmup + i); }) : json();
  return json{
      {"label", name},
      {"framework", "scratchformer"},
      {"precision", precision_name(precision)},
      {"threads", num_threads()},
      {"config", {{"vocab", s.vocab}, {"d", s.d}, {"layers", s.layers}, {"heads", s.heads}, {"T", s.T}, {"B", s.B}}},
      {"timed_steps", n},
      {"median_step_ms", med * 1e3},
      {"min_step_ms", times.front() * 1e3},
      {"tokens_per_s", tokens / med},
      {"params", n_params},
      {"flops_per_token", flops_per_token},
      {"achieved_gflops", achieved},
      {"sgemm_limit_gflops", limit["limit_gflops"]},
      {"sgemm_cold_gflops", limit["cold_gflops"]},
      {"share_of_limit", measure_limit ? achieved / limit["limit_gflops"].get<double>() : 0.0},
      {"sgemm_products", limit["products"]},
      {"peak_rss_mb", static_cast<double>(ru.ru_maxrss) / 1024.0},
      {"foreign_cpu_cores", foreign},
      {"final_loss", last_loss},
      {"breakdown", where}};
}

static bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

// j[key] when j is an object holding a number there, else 0 (a child that failed prints nothing).
static double number(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}
static double max_of(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); }
static std::string join(const std::vector<double>& v) {
  std::string out;
  char buf[32];
  for (double x : v) {
    std::snprintf(buf, sizeof buf, "%s%.1f", out.empty() ? "" : " ", x);
    out += buf;
  }
  return out.empty() ? "-" : out;
}

int main(int argc, char** argv) {
  sf::blas::reexec_with_better_kernels(argv);  // OpenBLAS kernels for a CPU it does not know (blas.h)
  std::string shape, reference = "bench/torch_gpt_bench.py", precision = "fp32";
  int steps = -1, warmup = 5, threads = 2, rounds = 3;
  bool with_reference = true, measure_limit = true, with_breakdown = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "error: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    auto count = [&](int lowest) {  // a whole number >= lowest, or a one-line error
      std::string v = next();
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < lowest || n > 1000000) {
        std::cerr << "error: " << a << " expects a whole number >= " << lowest << ", got '" << v << "'\n";
        std::exit(2);
      }
      return static_cast<int>(n);
    };
    if (a == "--shape") shape = next();
    else if (a == "--steps") steps = count(1);
    else if (a == "--warmup-steps") warmup = count(0);
    else if (a == "--threads") threads = count(1);
    else if (a == "--rounds") rounds = count(1);
    else if (a == "--precision") precision = next();
    else if (a == "--reference") reference = next();
    else if (a == "--no-reference") with_reference = false;
    else if (a == "--no-limit") measure_limit = false;
    else if (a == "--breakdown") with_breakdown = true;
    else {
      std::cerr << "error: unknown option '" << a << "' (see the header of bench/bench_gpt.cpp)\n";
      return 2;
    }
  }
  std::map<std::string, Precision> precisions = {
      {"fp32", Precision::fp32}, {"fp16", Precision::fp16}, {"bf16", Precision::bf16}};
  if (!precisions.count(precision)) {
    std::cerr << "error: --precision must be fp32, fp16 or bf16, got '" << precision << "'\n";
    return 2;
  }
  set_num_threads(threads);

  if (!shape.empty()) {  // one shape in this process
    auto it = kShapes.find(shape);
    if (it == kShapes.end()) {
      std::cerr << "error: --shape must be tiny, small or medium, got '" << shape << "'\n";
      return 2;
    }
    int n = steps > 0 ? steps : (shape == "medium" ? 20 : 50);
    std::cout << run_one(shape, it->second, n, warmup, precisions[precision], measure_limit, with_breakdown).dump()
              << std::endl;
    return 0;
  }

  if (with_breakdown) {
    std::cerr << "error: --breakdown needs --shape (it times one shape's steps in this process)\n";
    return 2;
  }
  // All shapes, each in a child process, then the reference for each.
  bool have_torch = with_reference && file_exists(reference) &&
                    std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
  if (with_reference && !have_torch)
    std::cerr << "note: PyTorch reference skipped (needs /usr/bin/python3 with torch and " << reference << ")\n";
  std::printf("machine: %s; %d threads\n", cpu_description().c_str(), threads);
  std::printf("%-7s %-6s %12s %12s %9s %9s %9s %7s %9s %7s %8s %8s  %s\n", "shape", "prec", "ours ms", "torch ms",
              "ratio", "GFLOP/s", "limit", "share", "cold", "of cold", "RSS MB", "torchRSS", "targets (share, ratio)");
  // Issue 23's targets: the share of the sgemm limit and the ratio to PyTorch, per shape.
  const std::map<std::string, std::pair<double, double>> targets = {
      {"tiny", {0.70, 3.0}}, {"small", {0.90, 2.0}}, {"medium", {0.95, 1.25}}};
  for (const char* name : {"tiny", "small", "medium"}) {
    const Shape6& s = kShapes.at(name);
    std::string self = "/proc/self/exe";
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) self.assign(exe, static_cast<size_t>(len));
    std::string args = " --shape " + std::string(name) + " --threads " + std::to_string(threads) + " --precision " +
                       precision + " --warmup-steps " + std::to_string(warmup) +
                       (steps > 0 ? " --steps " + std::to_string(steps) : "");
    std::string ref_cmd;
    if (have_torch) {
      std::ostringstream cmd;
      cmd << "OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 '" << reference << "' --vocab " << s.vocab << " --d " << s.d
          << " --layers " << s.layers << " --heads " << s.heads << " --T " << s.T << " --B " << s.B << " --threads "
          << threads << " --warmup-steps " << warmup << (std::string(name) == "medium" ? " --steps 20" : "")
          << " 2>/dev/null";
      ref_cmd = cmd.str();
    }
    // Rounds in turn: ours, reference, ours, reference, ...
    std::vector<double> ours_ms, ref_ms, gflops, limits, colds, rss, ref_rss;
    double foreign = 0;
    for (int r = 0; r < rounds; ++r) {
      json ours = run_json("'" + self + "'" + args);
      json ref = have_torch ? run_json(ref_cmd) : json();
      if (number(ours, "median_step_ms") > 0) {
        ours_ms.push_back(number(ours, "median_step_ms"));
        gflops.push_back(number(ours, "achieved_gflops"));
        limits.push_back(number(ours, "sgemm_limit_gflops"));
        colds.push_back(number(ours, "sgemm_cold_gflops"));
        rss.push_back(number(ours, "peak_rss_mb"));
      }
      if (number(ref, "median_step_ms") > 0) {
        ref_ms.push_back(number(ref, "median_step_ms"));
        ref_rss.push_back(number(ref, "peak_rss_mb"));
      }
      foreign = std::max({foreign, number(ours, "foreign_cpu_cores"), number(ref, "foreign_cpu_cores")});
    }
    double o = median(ours_ms), t = median(ref_ms), ratio = o > 0 && t > 0 ? t / o : 0.0;
    double achieved = median(gflops), limit = median(limits), share = limit > 0 ? achieved / limit : 0.0;
    double cold = median(colds), of_cold = cold > 0 ? achieved / cold : 0.0;
    auto [share_target, ratio_target] = targets.at(name);
    std::string verdict = std::string(share >= share_target ? "met" : "MISSED") + " " +
                          std::to_string(static_cast<int>(share_target * 100)) + "%, " +
                          (t <= 0                  ? "no reference"
                           : ratio >= ratio_target ? "met"
                                                   : "MISSED");
    char ratio_text[16];
    std::snprintf(ratio_text, sizeof ratio_text, " %.2fx", ratio_target);
    if (t > 0) verdict += ratio_text;
    std::printf("%-7s %-6s %12.2f %12.2f %8.2fx %9.1f %9.1f %6.0f%% %9.1f %6.0f%% %8.0f %8.0f  %s\n", name,
                precision.c_str(), o, t, ratio, achieved, limit, 100 * share, cold, 100 * of_cold, max_of(rss),
                max_of(ref_rss), verdict.c_str());
    if (rounds > 1 && !ours_ms.empty())
      std::printf("        rounds: ours %s ms, torch %s ms\n", join(ours_ms).c_str(), join(ref_ms).c_str());
    if (foreign > 0.1) std::printf("        (disturbed: other processes kept up to %.2f cores busy)\n", foreign);
    std::fflush(stdout);
  }
  std::printf(
      "ratio = torch ms / ours ms (above 1: we are faster). ms: the median over %d round(s) of each\n"
      "round's median step; RSS: the largest peak over the rounds. limit: OpenBLAS sgemm GFLOP/s on the\n"
      "linear layers' products (forward and both backward) with the same threads, measured in each of our\n"
      "rounds (median shown); share = GFLOP/s / limit. cold: the same products on our pool with their\n"
      "operands out of cache, as a step meets them (context, not the target's limit); of cold = GFLOP/s / cold.\n",
      rounds);
  return 0;
}

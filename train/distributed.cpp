// distributed.cpp: MPI's collectives when built with MPI (SF_WITH_MPI), the single-process
// versions otherwise; and the gradient sum of one optimizer step, on top of them.
#include "train/distributed.h"

#include <chrono>
#include <cstdlib>
#include <iostream>

#include "autograd/errors.h"

#ifdef SF_WITH_MPI
#include <mpi.h>
#endif

namespace sf {
namespace dist {

#ifdef SF_WITH_MPI

static bool g_started = false;  // MPI_Init ran (this process was started by mpirun)

bool built_with_mpi() { return true; }

void init(int* argc, char*** argv) {
  if (g_started || std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr) return;
  MPI_Init(argc, argv);
  g_started = true;
}

void finalize() {
  if (g_started) MPI_Finalize();
  g_started = false;
}

int rank() {
  int r = 0;
  if (g_started) MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int size() {
  int n = 1;
  if (g_started) MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

void allreduce_sum(std::vector<double>& values) {
  if (!g_started || values.empty()) return;
  MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

void broadcast(std::string& bytes, int root) {
  if (!g_started) return;
  unsigned long long n = bytes.size();
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, root, MPI_COMM_WORLD);
  bytes.resize(n);
  MPI_Bcast(bytes.data(), static_cast<int>(n), MPI_CHAR, root, MPI_COMM_WORLD);
}

void barrier() {
  if (g_started) MPI_Barrier(MPI_COMM_WORLD);
}

void abort(int code) {
  std::cerr.flush();
  if (g_started) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

#else  // one process: every collective is the identity

bool built_with_mpi() { return false; }
// Started by mpirun -np N > 1 but built without MPI: N independent runs into one run folder.
void init(int*, char***) {
  const char* n = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (n == nullptr || std::string(n) == "1") return;
  std::cerr << "error: this scratchformer was built without MPI, so mpirun -np " << n
            << " would start independent runs; install libopenmpi-dev (scripts/setup.sh) and rebuild\n";
  std::exit(2);
}
void finalize() {}
int rank() { return 0; }
int size() { return 1; }
void allreduce_sum(std::vector<double>&) {}
void broadcast(std::string&, int) {}
void barrier() {}
void abort(int code) {
  std::cerr.flush();
  std::exit(code);
}

#endif

// ---- the gradient sum of one optimizer step ----

GradientSum::GradientSum(const NamedParameters& params) : params_(params) {
  int64_t n = 0;
  for (const auto& [name, p] : params_) {
    if (p.dtype() != DType::f32) throw Error("gradient sum: parameter " + name + " is not float32");
    n += p.numel();
  }
  sum_.assign(static_cast<size_t>(n), 0.0f);
}

void GradientSum::add_micro_batch() {
  size_t at = 0;
  for (const auto& [name, p] : params_) {
    Tensor g = p.grad();
    const int64_t n = p.numel();
    float* s = sum_.data() + at;
    if (first_) {  // copied, not added to 0: 0 + g would turn a -0 into +0
      for (int64_t i = 0; i < n; ++i) s[i] = g.defined() ? g.data<float>()[i] : 0.0f;
    } else if (g.defined()) {
      const float* x = g.data<float>();
      for (int64_t i = 0; i < n; ++i) s[i] += x[i];
    }
    at += static_cast<size_t>(n);
  }
  first_ = false;
}

void GradientSum::finish(int64_t micro_batches) {
  if (size() > 1) {  // float64 on the wire: the sum over 2 ranks is the float32 sum, bit for bit
    using Clock = std::chrono::steady_clock;
    auto seconds = [](Clock::time_point a, Clock::time_point b) {
      return std::chrono::duration<double>(b - a).count();
    };
    auto t0 = Clock::now();
    barrier();  // waiting for the slowest rank, timed apart from the transfer
    auto t1 = Clock::now();
    wide_.assign(sum_.begin(), sum_.end());
    allreduce_sum(wide_);
    for (size_t i = 0; i < sum_.size(); ++i) sum_[i] = static_cast<float>(wide_[i]);
    wait_seconds_ += seconds(t0, t1);
    allreduce_seconds_ += seconds(t1, Clock::now());
  }
  const float m = static_cast<float>(micro_batches);
  size_t at = 0;
  for (const auto& [name, p] : params_) {
    const int64_t n = p.numel();
    Tensor g = p.grad();
    if (g.defined()) {  // (undefined: no micro-batch reached it, on any rank: the model is the same)
      float* x = g.data<float>();
      for (int64_t i = 0; i < n; ++i) x[i] = sum_[at + static_cast<size_t>(i)] / m;
    }
    at += static_cast<size_t>(n);
  }
  first_ = true;
}

}  // namespace dist
}  // namespace sf

// threads.h: the one place that decides how many threads the framework uses, and the one
// thread pool that uses them.
//
// Design (see bench/README.md for the measurements behind it): OpenBLAS runs single-threaded and
// our own pool splits work across the cores, for matrix products (blas.h splits a gemm into row
// or column blocks) and for the kernels around them (attention over (batch, head), LayerNorm over
// rows, the optimizer over chunks). Two pools on two cores spin against each other; one pool that
// sees all the work does not. Default: all cores; SF_NUM_THREADS or a config's train.threads
// overrides it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sf {

// Sets the number of threads used by parallel_for (and so by every parallel kernel).
// n <= 0 means "all cores". OpenBLAS itself is always kept at one thread.
void set_num_threads(int n);
int num_threads();
// Reads SF_NUM_THREADS from the environment (if set) and applies it; called by the CLI at start.
void init_threads_from_env();

// Runs fn(begin, end) over [0, n) split into contiguous chunks of at least `grain` items, at most
// 4 per thread (64 in all); each thread runs its own equal share of them, the calling thread the
// first, and then takes the chunks a slower thread has not started (threads.cpp). Small n (below
// 2 * grain), a single thread, or a call from inside a chunk (nesting) runs fn(0, n) inline.
// Returns when every chunk is done; an exception thrown by a chunk is rethrown here. The result
// of fn must not depend on where the chunks are cut: that is how any thread count gives the same
// bits.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// The same cut into up to `chunks_per_thread` chunks per thread (still at most 64 in all), for a
// few long items of uneven speed, such as attention's heads: with 4 chunks per thread, a thread
// that falls a little behind keeps the other waiting for most of a chunk, an eighth of the job on
// two threads. Each chunk costs a claim (an atomic flag shared by the threads), so the plain loops
// keep the default.
void parallel_for(int64_t n, int64_t grain, int chunks_per_thread, const std::function<void(int64_t, int64_t)>& fn);

// What those jobs ask for (attention's heads, linear's forward blocks on small_gemm): the cores of
// a VM drift apart by a few percent from one millisecond to the next, and the faster thread then
// takes over a sixteenth of the other's share at a time.
constexpr int kFineChunksPerThread = 16;

// The grain for plain elementwise loops: below about this many elements a second thread costs
// more (waking it, sharing cache lines) than it saves.
constexpr int64_t kElementGrain = 1 << 14;

// parallel_for over [0, n) in pieces that start at multiples of 64 elements. For SIMD loops: a
// vector loop with a scalar tail then gives the same bits whatever the number of threads (only
// the array's own last few elements take the scalar path).
inline void parallel_blocks(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  constexpr int64_t kBlock = 64;
  parallel_for((n + kBlock - 1) / kBlock, kElementGrain / kBlock,
               [&](int64_t b0, int64_t b1) { fn(b0 * kBlock, b1 * kBlock < n ? b1 * kBlock : n); });
}

// Sets `bytes` bytes at `data` to zero, the pool's threads each clearing a share (a gradient of a
// few MiB: one thread alone leaves the other waiting).
void parallel_zero(void* data, size_t bytes);

// ---- Where a step's time goes (bench_gpt --breakdown) ----
//
// Off by default. While on, every parallel_for call made outside a chunk adds to a table, under
// the label in scope on the calling thread: its wall time, whether it was split over the pool (a
// job) or ran inline (too small to split), and how long the caller waited at the end for the
// other threads. The autograd engine labels each backward closure "<op> backward"; the big
// forward ops, the optimizer step, clip_grad_norm and zero_grad carry their own label; anything
// else counts as "other". Serial work outside parallel_for is not in the table: it is the step's
// time minus the table's total.
class JobLabel {
 public:
  explicit JobLabel(const char* op, bool backward = false);
  ~JobLabel();
  JobLabel(const JobLabel&) = delete;
  JobLabel& operator=(const JobLabel&) = delete;

 private:
  const char* previous_op_;
  bool previous_backward_;
};

struct JobTime {
  std::string label;
  int64_t jobs = 0, inline_calls = 0;  // calls split over the pool, calls run on the caller alone
  double seconds = 0;                  // wall time of all those calls, as the caller saw it
  double waited = 0;                   // of which the caller waited for the other threads
};
void set_job_timing(bool on);
bool job_timing();
// The table so far, longest first; clears it.
std::vector<JobTime> take_job_times();

}  // namespace sf

// threads.cpp: thread counts, and the pool behind parallel_for.
//
// The pool: num_threads() - 1 workers plus the calling thread. A job is cut into up to 4 chunks
// per thread, and each thread owns an equal, contiguous share of them: thread t the t-th share,
// the caller the first. A thread runs its own chunks in order, then takes whatever the others
// have not started yet, from the far end of their shares. When the threads keep pace, each runs
// exactly its share, the same rows of the activations from op to op (its cache holds them); when
// one falls behind (its core slowed or taken by another process), the free one takes its last
// chunks instead of waiting for them, and a worker that is asleep loses all of its share to the
// caller. Chunks are claimed by an atomic flag each. Between jobs a worker spins for a short while
// (a training step calls parallel_for hundreds of times, microseconds apart), letting other threads
// have the core after the first 120 us, and then sleeps on a condition variable, so an idle program
// costs nothing.
//
// The generation counter is odd while no job is open. A worker enters a job by counting itself
// in `inside_` and then re-checking the generation; the caller closes the job (generation odd)
// before waiting for `inside_` to drain, so no worker can see a job half set up or left behind.
#include "autograd/cpu/threads.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "autograd/errors.h"

extern "C" void openblas_set_num_threads(int);  // declared here: <cblas.h> clashes with xtensor-blas

namespace sf {

// A spinning thread's hint to the core that it waits (x86's pause, ARM64's yield).
static void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

static int hardware_threads() {
  int n = static_cast<int>(std::thread::hardware_concurrency());
  return n > 0 ? n : 1;
}

static thread_local bool t_in_parallel = false;  // inside a chunk: nested calls run inline

// A job is cut into up to kChunksPerThread chunks per thread unless the caller asks for more (at
// most kMaxChunks in all).
constexpr int kChunksPerThread = 4, kMaxChunks = 64;

class Pool {
 public:
  explicit Pool(int threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { work(i); });
  }
  ~Pool() {
    stop_.store(true);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      wake_.notify_all();
    }
    for (std::thread& t : workers_) t.join();
  }
  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Returns how long the caller waited at the end for the other threads (timed only if `timed`).
  double run(int64_t n, int chunks, const std::function<void(int64_t, int64_t)>& fn, bool timed) {
    fn_ = &fn;  // set up while the generation is odd (closed)
    n_ = n;
    chunks_ = chunks;
    error_ = nullptr;
    for (int c = 0; c < chunks; ++c) claimed_[c].store(false);
    done_.store(0);
    generation_.fetch_add(1);    // even: open (sequentially consistent, like every atomic here) ...
    if (sleepers_.load() > 0) {  // ... before we look for sleeping workers
      std::lock_guard<std::mutex> lock(mutex_);
      wake_.notify_all();
    }
    run_chunks(0);
    const auto wait_start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    for (int spins = 0; done_.load() != chunks_; ++spins) wait_a_little(spins);
    const double waited =
        timed ? std::chrono::duration<double>(std::chrono::steady_clock::now() - wait_start).count() : 0.0;
    generation_.fetch_add(1);  // odd: closed; nobody enters any more
    for (int spins = 0; inside_.load() != 0; ++spins) wait_a_little(spins);
    if (error_) std::rethrow_exception(error_);
    return waited;
  }

 private:
  static void wait_a_little(int spins) {
    if (spins < 4096) cpu_relax();
    else std::this_thread::yield();  // the other thread was descheduled: give the core away
  }

  // Thread `self` (the caller is 0) runs the chunks of its own share first, in order, then what
  // is left of the others' shares, each from its far end.
  void run_chunks(int self) {
    const int threads = size();
    auto share_begin = [&](int t) { return chunks_ * t / threads; };
    for (int c = share_begin(self); c < share_begin(self + 1); ++c) try_chunk(c);
    for (int k = 1; k < threads; ++k) {
      const int t = (self + k) % threads;
      for (int c = share_begin(t + 1) - 1; c >= share_begin(t); --c) try_chunk(c);
    }
  }

  // Runs chunk c unless another thread has claimed it.
  void try_chunk(int c) {
    if (claimed_[c].load() || claimed_[c].exchange(true)) return;
    const int64_t begin = n_ * c / chunks_, end = n_ * (c + 1) / chunks_;
    t_in_parallel = true;
    try {
      (*fn_)(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
    t_in_parallel = false;
    done_.fetch_add(1);
  }

  void work(int self) {
    uint64_t seen = generation_.load();
    for (;;) {
      // Spin about 0.2 ms for an open job we have not seen, then sleep until one is published.
      // After 120 us the spin offers the core to other threads every 256 rounds: a job that long
      // in coming often means that the caller lost its core to another process (two programs on
      // two cores), and then the spinning worker held the core the caller needed to publish the
      // job (bench/README.md, the CI-time notes: the gain with two programs, none alone).
      auto fresh = [&] {
        uint64_t g = generation_.load();
        return (g != seen && g % 2 == 0) || stop_.load();
      };
      auto start = std::chrono::steady_clock::now();
      for (int spins = 0; !fresh(); ++spins) {
        cpu_relax();
        if ((spins & 255) != 255) continue;
        const auto spun = std::chrono::steady_clock::now() - start;
        if (spun > std::chrono::microseconds(120)) std::this_thread::yield();
        if (spun > std::chrono::microseconds(200)) {
          std::unique_lock<std::mutex> lock(mutex_);
          sleepers_.fetch_add(1);
          wake_.wait(lock, fresh);
          sleepers_.fetch_sub(1);
        }
      }
      if (stop_.load()) return;
      uint64_t g = generation_.load();
      seen = g;
      inside_.fetch_add(1);
      if (g % 2 == 0 && generation_.load() == g) run_chunks(self);  // an open job, still open: help
      inside_.fetch_sub(1);
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_, error_mutex_;
  std::condition_variable wake_;
  std::atomic<uint64_t> generation_{1};  // odd: no job open
  std::atomic<int> sleepers_{0}, inside_{0}, done_{0};
  std::array<std::atomic<bool>, kMaxChunks> claimed_{};  // per chunk of the open job: taken
  std::atomic<bool> stop_{false};
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;  // the open job
  int64_t n_ = 0;
  int chunks_ = 0;
  std::exception_ptr error_;
};

static int g_threads = 0;  // 0: not decided yet (all cores)
// OpenBLAS stays single-threaded from the start, also for gemms too small to be split.
static const bool g_blas_single_threaded = (openblas_set_num_threads(1), true);
static std::unique_ptr<Pool>& pool_slot() {
  static std::unique_ptr<Pool> pool;
  return pool;
}

static Pool& pool() {
  std::unique_ptr<Pool>& p = pool_slot();
  if (!p) p = std::make_unique<Pool>(num_threads());
  return *p;
}

void set_num_threads(int n) {
  g_threads = n > 0 ? n : hardware_threads();
  std::unique_ptr<Pool>& p = pool_slot();
  if (p && p->size() != g_threads) p.reset();  // rebuilt at the next parallel_for
}

int num_threads() { return g_threads > 0 ? g_threads : hardware_threads(); }

void init_threads_from_env() {
  const char* v = std::getenv("SF_NUM_THREADS");
  if (!v || !*v) return;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 0 || n > 1024)
    throw ConfigError(std::string("SF_NUM_THREADS: expected a whole number from 0 (all cores) to 1024, got '") + v +
                      "'");
  set_num_threads(static_cast<int>(n));
}

// How one parallel_for call ran: split over the pool or inline, and the caller's wait at the end.
struct CallRun {
  bool pooled = false;
  double waited = 0;
};

static CallRun run_call(int64_t n, int64_t grain, int per_thread, const std::function<void(int64_t, int64_t)>& fn,
                        bool timed) {
  Pool& p = pool();
  int64_t chunks = grain > 0 ? n / grain : n;
  const int64_t most = std::min<int64_t>(kMaxChunks, int64_t(p.size()) * std::max(per_thread, 1));
  if (chunks > most) chunks = most;
  if (chunks < 2 || t_in_parallel) {
    fn(0, n);
    return {};
  }
  // One job at a time: a second user thread calling in meanwhile runs its work inline.
  static std::mutex busy;
  std::unique_lock<std::mutex> lock(busy, std::try_to_lock);
  if (!lock.owns_lock()) {
    fn(0, n);
    return {};
  }
  return {true, p.run(n, static_cast<int>(chunks), fn, timed)};
}

// ---- job timing ----

static std::atomic<bool> g_job_timing{false};
static thread_local const char* t_label_op = nullptr;  // the JobLabel in scope on this thread
static thread_local bool t_label_backward = false;
static std::mutex g_job_times_mutex;
static std::map<std::string, JobTime> g_job_times;

JobLabel::JobLabel(const char* op, bool backward) : previous_op_(t_label_op), previous_backward_(t_label_backward) {
  t_label_op = op;
  t_label_backward = backward;
}
JobLabel::~JobLabel() {
  t_label_op = previous_op_;
  t_label_backward = previous_backward_;
}

void parallel_zero(void* data, size_t bytes) {
  char* begin = static_cast<char*>(data);
  parallel_for(static_cast<int64_t>(bytes), kElementGrain * 4,
               [&](int64_t b0, int64_t b1) { std::memset(begin + b0, 0, static_cast<size_t>(b1 - b0)); });
}

void set_job_timing(bool on) { g_job_timing.store(on); }
bool job_timing() { return g_job_timing.load(); }

std::vector<JobTime> take_job_times() {
  std::lock_guard<std::mutex> lock(g_job_times_mutex);
  std::vector<JobTime> table;
  for (auto& [label, t] : g_job_times) table.push_back(t);
  g_job_times.clear();
  std::sort(table.begin(), table.end(), [](const JobTime& a, const JobTime& b) { return a.seconds > b.seconds; });
  return table;
}

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  parallel_for(n, grain, kChunksPerThread, fn);
}

void parallel_for(int64_t n, int64_t grain, int chunks_per_thread, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (t_in_parallel || !g_job_timing.load(std::memory_order_relaxed)) {
    run_call(n, grain, chunks_per_thread, fn, false);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  const CallRun how = run_call(n, grain, chunks_per_thread, fn, true);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string label = t_label_op ? std::string(t_label_op) + (t_label_backward ? " backward" : "") : "other";
  std::lock_guard<std::mutex> lock(g_job_times_mutex);
  JobTime& t = g_job_times[label];
  t.label = label;
  (how.pooled ? t.jobs : t.inline_calls) += 1;
  t.seconds += seconds;
  t.waited += how.waited;
}

}  // namespace sf

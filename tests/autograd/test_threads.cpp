// The thread pool (parallel_for) and the gemm split over it (blas.h), against plain loops.
#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "autograd/cpu/blas.h"
#include "autograd/cpu/threads.h"
#include "autograd/ops.h"

using namespace sf;

TEST_CASE("parallel_for visits every index exactly once, for any size and grain") {
  set_num_threads(2);
  for (int64_t n : {1, 2, 3, 7, 64, 1000, 4097})
    for (int64_t grain : {1, 3, 64, 5000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      parallel_for(n, grain, [&](int64_t begin, int64_t end) {
        CHECK(begin < end);
        for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
      });
      int wrong = 0;
      for (auto& h : hits) wrong += h.load() != 1;
      CHECK_MESSAGE(wrong == 0, "n=" << n << " grain=" << grain);
    }
}

TEST_CASE("parallel_for uses a second thread when there is work for two") {
  set_num_threads(2);
  std::atomic<int> others{0};
  const std::thread::id me = std::this_thread::get_id();
  for (int round = 0; round < 200 && others.load() == 0; ++round)
    parallel_for(2, 1, [&](int64_t, int64_t) {
      if (std::this_thread::get_id() != me) others++;
      else std::this_thread::sleep_for(std::chrono::microseconds(200));  // leave chunk 1 to the worker
    });
  CHECK(others.load() > 0);
}

TEST_CASE("parallel_for cuts a job into at most 4 chunks per thread") {
  set_num_threads(2);
  for (auto [n, grain, chunks] : {std::array<int64_t, 3>{1000, 1, 8}, {1000, 200, 5}, {1000, 400, 2}, {3, 1, 3}}) {
    std::atomic<int> calls{0};
    parallel_for(n, grain, [&](int64_t begin, int64_t end) {
      CHECK(end - begin >= grain);
      calls++;
    });
    CHECK_MESSAGE(calls.load() == chunks, "n=" << n << " grain=" << grain);
  }
}

// Asked for more chunks per thread (attention's heads): up to that many, still at most 64 in all;
// every index visited once.
TEST_CASE("parallel_for cuts a job into up to the chunks per thread asked for, at most 64 in all") {
  set_num_threads(2);
  for (auto [n, per_thread, chunks] :
       {std::array<int64_t, 3>{1000, 16, 32}, {20, 16, 20}, {1000, 40, 64}, {1000, 1, 2}, {1000, 0, 2}}) {
    std::atomic<int> calls{0};
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    parallel_for(n, 1, static_cast<int>(per_thread), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
      calls++;
    });
    CHECK_MESSAGE(calls.load() == chunks, "n=" << n << " per thread " << per_thread);
    int wrong = 0;
    for (auto& h : hits) wrong += h.load() != 1;
    CHECK(wrong == 0);
  }
  set_num_threads(0);
}

TEST_CASE("a thread that falls behind loses the last chunks of its share to the free one") {
  set_num_threads(2);
  const std::thread::id me = std::this_thread::get_id();
  std::array<std::atomic<int>, 8> by_caller{};
  // 8 chunks: the caller's share is 0-3, the worker's 4-7. The worker takes 100 ms a chunk, the
  // caller no time: the caller runs its own share, then the worker's from its end (7, 6, 5) while
  // the worker is still on 4 (or runs 4 as well when the worker never woke up).
  parallel_for(8, 1, [&](int64_t begin, int64_t end) {
    CHECK(end == begin + 1);
    if (std::this_thread::get_id() == me) by_caller[static_cast<size_t>(begin)] = 1;
    else std::this_thread::sleep_for(std::chrono::milliseconds(100));
  });
  for (int c : {0, 1, 2, 3, 5, 6, 7}) CHECK_MESSAGE(by_caller[static_cast<size_t>(c)].load() == 1, "chunk " << c);
}

TEST_CASE("nested parallel_for runs inline, and one thread means the calling thread only") {
  set_num_threads(2);
  std::atomic<int> total{0};
  parallel_for(4, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      parallel_for(10, 1, [&](int64_t i0, int64_t i1) { total += static_cast<int>(i1 - i0); });
  });
  CHECK(total.load() == 40);

  set_num_threads(1);
  const std::thread::id me = std::this_thread::get_id();
  bool only_me = true;
  parallel_for(100, 1, [&](int64_t, int64_t) { only_me = only_me && std::this_thread::get_id() == me; });
  CHECK(only_me);
  set_num_threads(0);  // back to all cores
  CHECK(num_threads() >= 1);
}

TEST_CASE("an exception thrown in a chunk reaches the caller, and the pool keeps working") {
  set_num_threads(2);
  CHECK_THROWS_WITH_AS(parallel_for(8, 1,
                                    [](int64_t begin, int64_t) {
                                      if (begin > 0) throw std::runtime_error("chunk failed");
                                    }),
                       "chunk failed", std::runtime_error);
  std::atomic<int64_t> sum{0};
  parallel_for(100, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) sum += i;
  });
  CHECK(sum.load() == 4950);
}

// C = alpha op(A) op(B) + beta C by the definition, on row-major buffers with leading dimensions.
template <class T>
static void naive_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
                       int64_t ldb, T beta, T* C, int64_t ldc) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += double(ta ? A[k * lda + m] : A[m * lda + k]) * double(tb ? B[n * ldb + k] : B[k * ldb + n]);
      C[m * ldc + n] = static_cast<T>(alpha * acc + beta * C[m * ldc + n]);
    }
}

template <class T>
static void check_gemm_split(int64_t M, int64_t N, int64_t K, double tol) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const int64_t pad = 3;  // every operand sits in a wider buffer: leading dimension > row length
      const int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
      std::vector<T> A(static_cast<size_t>((ta ? K : M) * lda)), B(static_cast<size_t>((tb ? N : K) * ldb));
      std::vector<T> C(static_cast<size_t>(M * ldc)), expect;
      for (size_t i = 0; i < A.size(); ++i) A[i] = static_cast<T>(std::sin(0.37 * double(i)));
      for (size_t i = 0; i < B.size(); ++i) B[i] = static_cast<T>(std::cos(0.11 * double(i)));
      for (size_t i = 0; i < C.size(); ++i) C[i] = static_cast<T>(0.01 * double(i % 17));
      expect = C;
      naive_gemm<T>(ta, tb, M, N, K, T(0.5), A.data(), lda, B.data(), ldb, T(2), expect.data(), ldc);
      blas::gemm_parallel<T>(ta, tb, M, N, K, T(0.5), A.data(), lda, B.data(), ldb, T(2), C.data(), ldc);
      double worst = 0;
      for (size_t i = 0; i < C.size(); ++i) worst = std::max(worst, std::fabs(double(C[i]) - double(expect[i])));
      CHECK_MESSAGE(worst <= tol, "M=" << M << " N=" << N << " K=" << K << " ta=" << ta << " tb=" << tb);
    }
}

TEST_CASE("gemm split over the pool equals the definition: row blocks, column blocks, transposes") {
  set_num_threads(2);
  check_gemm_split<double>(200, 40, 70, 1e-11);  // M >= N: row blocks
  check_gemm_split<double>(40, 200, 70, 1e-11);  // M < N: column blocks
  check_gemm_split<double>(37, 5, 3, 1e-12);     // too small to split
  check_gemm_split<float>(161, 97, 129, 1e-4);   // float32, ragged block edges
}

TEST_CASE("gemm blocks: fixed by the shape, an even count, small weight gradients split in two") {
  // Every element covered once: the blocks tile the split extent exactly.
  auto check_tiles = [](int64_t M, int64_t N, int64_t K) {
    const blas::GemmBlocks g = blas::gemm_blocks(M, N, K);
    const int64_t extent = g.by_rows ? M : N;
    CHECK(g.size * (g.count - 1) < extent);
    CHECK(g.size * g.count >= extent);
    return g;
  };
  blas::GemmBlocks g = check_tiles(1024, 192, 64);  // tiny's qkv forward: 8 blocks of 128 rows
  CHECK((g.by_rows && g.count == 8 && g.size == 128));
  // Weight gradients of a 512-row batch (longer sums are cut along K instead, see gemm_k_chunks):
  g = check_tiles(64, 64, 512);  // a 64 x 64 weight gradient: 2 blocks, not one thread alone
  CHECK(g.count == 2);
  g = check_tiles(192, 64, 512);  // qkv weight gradient: 2 blocks of 96, not 3 of 64
  CHECK((g.by_rows && g.count == 2 && g.size == 96));
  g = check_tiles(65, 64, 512);  // LM head weight gradient: 64 columns as 32 + 32, not 65 rows as 48 + 17
  CHECK((!g.by_rows && g.count == 2 && g.size == 32));
  g = check_tiles(64, 256, 512);  // fc projection weight gradient: column blocks
  CHECK((!g.by_rows && g.count == 4));
  g = check_tiles(37, 5, 3);  // under a megaflop: one call
  CHECK(g.count == 1);
  g = check_tiles(2048, 1152, 384);  // medium's shapes keep 8 blocks
  CHECK(g.count == 8);
  for (int64_t e = 1; e <= 600; e += 7) {
    g = check_tiles(e, 40, 4096);
    CHECK((g.count == 1 || g.count % 2 == 0));
  }
}

TEST_CASE("gemm split over the pool equals the definition at the small models' weight-gradient shapes") {
  set_num_threads(2);
  check_gemm_split<double>(64, 64, 300, 1e-11);  // two row blocks of 32
  check_gemm_split<double>(65, 64, 300, 1e-11);  // two column blocks of 32
  check_gemm_split<float>(192, 64, 257, 1e-4);   // two blocks of 96
  set_num_threads(0);
}

TEST_CASE("a long sum into a small C is cut along K: the chunk counts, and the product equals the definition") {
  CHECK(blas::gemm_k_chunks(384, 128, 2048) == 2);    // small's qkv weight gradient
  CHECK(blas::gemm_k_chunks(192, 64, 1024) == 2);     // tiny's
  CHECK(blas::gemm_k_chunks(1536, 384, 2048) == 2);   // medium's fc projection
  CHECK(blas::gemm_k_chunks(64, 64, 8192) == 8);      // a long batch: one chunk per 1024 rows
  CHECK(blas::gemm_k_chunks(64, 64, 100000) == 8);    // at most 8
  CHECK(blas::gemm_k_chunks(64, 64, 3100) == 2);      // 3 rounded down to an even count
  CHECK(blas::gemm_k_chunks(64, 64, 1023) == 1);      // too short to cut
  CHECK(blas::gemm_k_chunks(2048, 384, 128) == 1);    // a forward product: K is the short side
  CHECK(blas::gemm_k_chunks(2048, 128, 1536) == 1);   // K shorter than M: cut C instead
  CHECK(blas::gemm_k_chunks(2048, 1024, 4096) == 1);  // C too big for scratch copies
  set_num_threads(2);
  check_gemm_split<double>(64, 48, 2100, 1e-10);  // 2 chunks of 1050, every transpose, padded rows, beta 2
  check_gemm_split<double>(20, 12, 9001, 1e-10);  // 8 chunks, the last one shorter
  check_gemm_split<float>(100, 60, 3000, 1e-3);   // float32
  set_num_threads(0);
}

TEST_CASE("a gemm gives the same bits split over two threads as on one") {
  // Each element of C is one dot product over K whichever block it falls in, so the split must
  // not change a single bit: training stays reproducible whatever SF_NUM_THREADS says.
  struct Case {
    int64_t M, N, K;
    bool ta, tb;
  };
  for (Case c : {Case{300, 70, 257, false, false}, Case{29, 64, 512, true, false}, Case{512, 64, 29, false, false},
                 Case{512, 192, 64, false, true}, Case{64, 192, 512, true, false}, Case{192, 64, 2048, true, false},
                 Case{20, 12, 9001, false, true}}) {  // (the last two cut along K)
    const int64_t M = c.M, N = c.N, K = c.K;
    std::vector<float> A(static_cast<size_t>(M * K)), B(static_cast<size_t>(K * N));
    for (size_t i = 0; i < A.size(); ++i) A[i] = static_cast<float>(std::sin(0.91 * double(i)));
    for (size_t i = 0; i < B.size(); ++i) B[i] = static_cast<float>(std::cos(0.23 * double(i)));
    std::vector<float> one(static_cast<size_t>(M * N)), two(one.size());
    set_num_threads(1);
    blas::gemm_dense<float>(c.ta, c.tb, M, N, K, A.data(), B.data(), 0.0f, one.data());
    set_num_threads(2);
    blas::gemm_dense<float>(c.ta, c.tb, M, N, K, A.data(), B.data(), 0.0f, two.data());
    CHECK_MESSAGE(one == two, "M=" << M << " N=" << N << " K=" << K << " ta=" << c.ta << " tb=" << c.tb);
  }
  set_num_threads(0);
}

TEST_CASE(
    "OpenBLAS kernels: a generic fallback is replaced from the CPU's features, a known CPU or the user's choice is kept") {
  using blas::core_override;
  // OpenBLAS fell back to its SSE3 kernels on a CPU it does not know
  CHECK(core_override("Prescott", true, true, false) == "SkylakeX");
  CHECK(core_override("Prescott", false, true, false) == "Haswell");
  CHECK(core_override("Prescott", false, false, false) == "");  // nothing better to ask for
  // it knew the CPU: its choice stands, even where another family would also run
  CHECK(core_override("Haswell", true, true, false) == "");
  CHECK(core_override("SkylakeX", true, true, false) == "");
  CHECK(core_override("Zen", false, true, false) == "");
  // OPENBLAS_CORETYPE set by the user (or by an earlier re-exec): never overridden
  CHECK(core_override("Prescott", true, true, true) == "");
  // what this process runs has a name (the library answers)
  CHECK(!blas::core_name().empty());
}

TEST_CASE("OpenBLAS kernels: the AVX-512 families are told from the others by name") {
  for (const char* wide : {"SkylakeX", "Cooperlake", "SapphireRapids"}) CHECK(blas::avx512_family(wide));
  for (const char* narrow : {"Haswell", "Zen", "Prescott", "Sandybridge", "", "skylakex"})
    CHECK_FALSE(blas::avx512_family(narrow));
}

TEST_CASE("OpenBLAS kernels: a note when the user's OPENBLAS_CORETYPE holds an AVX-512 CPU to narrower kernels") {
  using blas::narrow_kernels_note;
  const std::string note = narrow_kernels_note("Haswell", "Haswell", true);
  CHECK(note.find("OPENBLAS_CORETYPE=Haswell holds OpenBLAS to Haswell kernels") == 0);
  CHECK(note.find('\n') == std::string::npos);  // one line
  CHECK(!narrow_kernels_note("Zen", "ZEN", true).empty());
  CHECK(!narrow_kernels_note("Prescott", "Prescott", true).empty());
  // AVX-512 kernels asked for, nothing set (OpenBLAS chose), or a CPU without AVX-512: no note
  CHECK(narrow_kernels_note("SkylakeX", "SkylakeX", true).empty());
  CHECK(narrow_kernels_note("Cooperlake", "Cooperlake", true).empty());
  CHECK(narrow_kernels_note("Haswell", nullptr, true).empty());
  CHECK(narrow_kernels_note("Haswell", "Haswell", false).empty());
}

// Job timing (bench_gpt --breakdown): what a labelled parallel_for adds to the table.
static const JobTime* find_label(const std::vector<JobTime>& table, const std::string& label) {
  for (const JobTime& t : table)
    if (t.label == label) return &t;
  return nullptr;
}

TEST_CASE("job timing: off it records nothing, on it counts each call under the label in scope") {
  set_num_threads(2);
  take_job_times();
  auto slow_chunks = [](int64_t, int64_t) { std::this_thread::sleep_for(std::chrono::microseconds(300)); };
  parallel_for(2, 1, slow_chunks);  // timing is off
  CHECK(!job_timing());
  CHECK(take_job_times().empty());

  set_job_timing(true);
  {
    JobLabel outer("outer");
    parallel_for(2, 1, slow_chunks);  // split over the pool: a job
    parallel_for(2, 1, slow_chunks);
    {
      JobLabel inner("inner", /*backward=*/true);
      parallel_for(1, 1, slow_chunks);  // one item: runs inline
    }
    parallel_for(2, 1, [&](int64_t b, int64_t e) {  // a call from inside a chunk is part of its job
      parallel_for(2, 1, slow_chunks);
      slow_chunks(b, e);
    });
  }
  parallel_for(2, 1, slow_chunks);  // no label in scope
  set_job_timing(false);
  parallel_for(2, 1, slow_chunks);  // off again: not counted

  const std::vector<JobTime> table = take_job_times();
  REQUIRE(table.size() == 3);
  const JobTime *outer = find_label(table, "outer"), *inner = find_label(table, "inner backward"),
                *other = find_label(table, "other");
  REQUIRE(outer);
  REQUIRE(inner);
  REQUIRE(other);
  CHECK(outer->jobs == 3);
  CHECK(outer->inline_calls == 0);
  CHECK(outer->seconds >= 3 * 300e-6);  // each call sleeps at least once on the caller
  CHECK(outer->waited >= 0);
  CHECK(outer->waited <= outer->seconds);
  CHECK(inner->jobs == 0);
  CHECK(inner->inline_calls == 1);
  CHECK(inner->seconds >= 300e-6);
  CHECK(other->jobs == 1);
  for (size_t i = 1; i < table.size(); ++i) CHECK(table[i - 1].seconds >= table[i].seconds);  // longest first
  CHECK(take_job_times().empty());                                                            // taking clears
  set_num_threads(0);
}

TEST_CASE("job timing: an op's forward counts under its name, its backward under '<op> backward'") {
  set_num_threads(2);
  Generator gen(3);
  Tensor x = Tensor::randn({256, 64}, gen).requires_grad_(true);
  Tensor w = Tensor::randn({96, 64}, gen).requires_grad_(true), b = Tensor::randn({96}, gen).requires_grad_(true);
  const Tensor seed = Tensor::ones({256, 96});
  take_job_times();
  set_job_timing(true);
  Tensor y = linear(x, w, b);
  y.backward(seed);
  set_job_timing(false);
  const std::vector<JobTime> table = take_job_times();
  const JobTime *forward = find_label(table, "linear"), *backward = find_label(table, "linear backward");
  REQUIRE(forward);
  REQUIRE(backward);
  CHECK(forward->jobs + forward->inline_calls >= 1);
  CHECK(backward->jobs + backward->inline_calls >= 2);  // dX and dW at least
  CHECK(find_label(table, "other") == nullptr);         // nothing in this step ran unlabelled
  set_num_threads(0);
}

// Broadcasting ops and the embedding lookup split their rows (the lookup's backward its columns)
// over the pool: the values of a plain loop, the same bits on one thread and on two, with an
// odometer that starts mid-tensor for each piece (a batch axis, a broadcast middle axis).
TEST_CASE("broadcast add and mul, embedding and its scatter-add: a plain loop's values on 1 and 2 threads") {
  Generator gen(9);
  // 448 rows of 96 in two pieces: the second starts at row 224, halfway through a batch entry
  const Tensor a = Tensor::randn({7, 64, 96}, gen), pos = Tensor::randn({64, 96}, gen),
               mid = Tensor::randn({7, 1, 96}, gen);
  const Tensor table = Tensor::randn({50, 130}, gen);
  IntTensor ids({7, 300}, std::vector<int32_t>(7 * 300));
  for (int64_t i = 0; i < ids.numel(); ++i) ids[i] = (i * 37 + i / 11) % 50;  // repeats: the scatter adds
  const Tensor dy = Tensor::randn({7, 300, 130}, gen);
  std::vector<std::vector<double>> runs[2];
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    Tensor w = table.clone().requires_grad_();
    Tensor e = embedding(w, ids);
    e.backward(dy);
    runs[threads - 1] = {add(a, pos).to_vector(), mul(a, mid).to_vector(), e.to_vector(), w.grad().to_vector()};
  }
  set_num_threads(0);
  for (size_t k = 0; k < 4; ++k) CHECK(runs[0][k] == runs[1][k]);
  const std::vector<double> av = a.to_vector(), pv = pos.to_vector(), mv = mid.to_vector(), tv = table.to_vector();
  const std::vector<double> gv = dy.to_vector();
  int wrong_add = 0, wrong_mul = 0, wrong_lookup = 0, wrong_scatter = 0;
  for (int64_t i = 0; i < 7 * 64 * 96; ++i) {
    const float x = static_cast<float>(av[i]);
    wrong_add += runs[1][0][i] != x + static_cast<float>(pv[i % (64 * 96)]);
    wrong_mul += runs[1][1][i] != x * static_cast<float>(mv[i / (64 * 96) * 96 + i % 96]);
  }
  std::vector<float> want(50 * 130, 0.0f);
  for (int64_t i = 0; i < ids.numel(); ++i)
    for (int64_t c = 0; c < 130; ++c) {
      wrong_lookup += runs[1][2][i * 130 + c] != tv[ids[i] * 130 + c];
      want[ids[i] * 130 + c] += static_cast<float>(gv[i * 130 + c]);
    }
  for (size_t j = 0; j < want.size(); ++j) wrong_scatter += runs[1][3][j] != want[j];
  CHECK(wrong_add == 0);
  CHECK(wrong_mul == 0);
  CHECK(wrong_lookup == 0);
  CHECK(wrong_scatter == 0);
}

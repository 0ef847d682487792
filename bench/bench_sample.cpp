// bench_sample.cpp: generation speed with the KV cache, side by side with PyTorch.
//
// The model is bench_gpt's (GPT-2 layout, random weights, init N(0, 0.02)) at the tiny and small
// shapes; each of B rows (1 and 8) starts from a one-token prompt and draws T - 1 new tokens
// (so the cache never slides) from softmax(logits) at temperature 1 through nn/sampling.h, the
// sampler `scratchformer sample` uses. The reference is bench/torch_gpt_bench.py --sample, the
// same model in PyTorch 1.13 with its own per-layer KV cache and torch.multinomial. Ours and the
// reference take turns for --rounds rounds; each round reports the median of its timed
// generations, and the table shows the median over the rounds.
//
//   bench_sample                  both shapes, batch 1 and 8, with the reference when torch exists
//   options: --rounds N (3) --generations N (timed per round, 10) --threads N (2) --no-reference
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "app/startup.h"
#include "autograd/cpu/threads.h"
#include "bench/bench_common.h"
#include "nn/gpt.h"
#include "nn/sampling.h"

using namespace sf;
using json = nlohmann::json;
using sf::bench::median;
using sf::bench::run_json;

namespace {

struct BenchShape {
  const char* name;
  int64_t vocab, d, layers, heads, T;
};
const BenchShape kShapes[] = {{"tiny", 65, 64, 2, 4, 32}, {"small", 65, 128, 4, 4, 128}};

// Tokens per second of our sampler: the median over `generations` timed generations (after one
// untimed one) of B * (T - 1) new tokens.
double ours_tokens_per_s(const BenchShape& s, int64_t B, int generations) {
  GPTConfig c;
  c.vocab_size = s.vocab, c.block_size = s.T, c.n_layer = s.layers, c.n_head = s.heads, c.n_embd = s.d;
  c.activation = Activation::gelu_tanh;
  c.seed = 1337;
  GPT model(c);
  Generator gen(1338);
  std::vector<std::vector<int32_t>> prompts;
  for (int64_t b = 0; b < B; ++b) prompts.push_back({static_cast<int32_t>(gen.randint(s.vocab))});
  SampleOptions o;
  o.max_new_tokens = s.T - 1;
  o.temperature = 1.0;
  std::vector<double> seconds;
  for (int i = 0; i <= generations; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::vector<int32_t>> rows = sample_rows(model, prompts, o, gen);
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rows.size() != static_cast<size_t>(B) || rows[0].size() != static_cast<size_t>(s.T)) {
      std::cerr << "error: the sampler returned " << rows.size() << " rows of " << rows[0].size() << " tokens\n";
      std::exit(1);
    }
    if (i > 0) seconds.push_back(t);
  }
  return static_cast<double>(B * (s.T - 1)) / median(seconds);
}

}  // namespace

int main(int argc, char** argv) {
  sf::start_program(argv);  // first: the BLAS kernels for this CPU (app/startup.h)
  int rounds = 3, generations = 10, threads = 2;
  bool with_reference = true;
  std::string reference = "bench/torch_gpt_bench.py";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto count = [&] {
      long n = i + 1 < argc ? std::strtol(argv[++i], nullptr, 10) : 0;
      if (n < 1 || n > 100000) {
        std::cerr << "error: " << a << " expects a whole number from 1 to 100000\n";
        std::exit(2);
      }
      return static_cast<int>(n);
    };
    if (a == "--rounds") rounds = count();
    else if (a == "--generations") generations = count();
    else if (a == "--threads") threads = count();
    else if (a == "--no-reference") with_reference = false;
    else {
      std::cerr << "error: unknown option '" << a << "' (see the header of bench/bench_sample.cpp)\n";
      return 2;
    }
  }
  set_num_threads(threads);
  bool have_torch = with_reference && std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0 &&
                    access(reference.c_str(), R_OK) == 0;
  if (with_reference && !have_torch)
    std::cerr << "note: PyTorch reference skipped (needs /usr/bin/python3 with torch, run from the project root)\n";
  std::printf("%-6s %5s %14s %14s %8s   rounds (ours / torch tokens/s)\n", "shape", "batch", "ours tok/s",
              "torch tok/s", "ratio");
  for (const BenchShape& s : kShapes) {
    for (int64_t B : {1, 8}) {
      std::ostringstream cmd;
      cmd << "OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 '" << reference << "' --vocab " << s.vocab << " --d " << s.d
          << " --layers " << s.layers << " --heads " << s.heads << " --T " << s.T << " --B " << B << " --threads "
          << threads << " --sample " << s.T - 1 << " --steps " << generations << " --warmup-steps 1 2>/dev/null";
      std::vector<double> ours, torch;
      for (int r = 0; r < rounds; ++r) {
        ours.push_back(ours_tokens_per_s(s, B, generations));
        if (have_torch) {
          json ref = run_json(cmd.str());
          if (ref.is_object() && ref.contains("tokens_per_s")) torch.push_back(ref["tokens_per_s"].get<double>());
        }
      }
      std::ostringstream each;
      for (size_t r = 0; r < ours.size(); ++r)
        each << (r ? ", " : "") << static_cast<long>(ours[r]) << " / "
             << (r < torch.size() ? static_cast<long>(torch[r]) : 0);
      double o = median(ours), t = median(torch);
      std::printf("%-6s %5lld %14.0f %14.0f %7.2fx   %s\n", s.name, static_cast<long long>(B), o, t,
                  t > 0 ? o / t : 0.0, each.str().c_str());
      std::fflush(stdout);
    }
  }
  std::printf(
      "ratio = our tokens/s / torch tokens/s (above 1: we are faster); each row: B rows x (T - 1) new tokens\n"
      "per generation after a one-token prompt, the median of %d timed generations per round, the median of %d rounds.\n",
      generations, rounds);
  return 0;
}

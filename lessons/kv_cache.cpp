// Lesson 23: the KV cache's memory. While a GPT generates, every layer keeps the keys and values
// of all earlier tokens so that each new token costs one row of attention instead of a whole new
// forward. The lesson counts its bytes per token and per full context for standard (one K/V head
// per query head), grouped-query (GQA) and multi-query (MQA) attention at a GPT-2-small and a
// 7B-class shape, checks the count against the engine's own cache, and measures sampling with and
// without the cache. Text: kv_cache.md.
//
// Legend: L layers, H query heads, H_kv key/value heads, D head size, T tokens.
#include <cmath>
#include <map>
#include <ostream>
#include <sstream>

#include "autograd/ops.h"
#include "lessons/common/cost_common.h"
#include "lessons/lesson.h"
#include "lessons/kv_cache.h"
#include "nn/gpt.h"
#include "nn/sampling.h"

namespace sf::lessons {

namespace {

// [excerpt: bytes]
// A K and a V vector of D numbers for each of the H_kv key/value heads of each of the L layers.
double kv_bytes_per_token(int64_t L, int64_t H_kv, int64_t D, int64_t bytes_per_number) {
  return 2.0 * static_cast<double>(L * H_kv * D * bytes_per_number);
}
// [/excerpt]

struct Shape {
  const char* name;
  const char* name_zh;
  int64_t layers, heads, d_model, context;
  int64_t gqa_kv_heads;  // the grouped-query variant's key/value heads
};

GPTConfig small_config() {
  GPTConfig c;
  c.vocab_size = 65;  // Tiny Shakespeare's characters
  c.block_size = 256;
  c.n_layer = 4;
  c.n_head = 4;
  c.n_embd = 128;
  c.bias = false;
  c.seed = 23;
  return c;
}

struct Sampling {
  double cached_tokens_per_s = 0, uncached_tokens_per_s = 0;
  double same_tokens = 0;  // 1 when both ways drew the same tokens
};

// Greedy sampling of n tokens after a one-token prompt: GPT::generate (with the KV cache), and a
// loop that runs the whole prefix through forward() for every new token (no cache).
Sampling measure_sampling(const KvCacheOptions& o) {
  static std::map<int64_t, Sampling> done;  // once per process: both languages print one measurement
  if (auto it = done.find(o.new_tokens); it != done.end()) return it->second;
  GPT model(small_config());
  model.eval();
  Sampling s;
  IntTensor prompt({1, 1}, {0});
  std::vector<int32_t> cached_ids, uncached_ids;
  double cached = fastest_seconds(
      [&] {
        Generator gen(1);
        IntTensor outv = model.generate(prompt, o.new_tokens, 0.0, 0, gen);
        cached_ids = outv.data;
      },
      o.repeats);
  // [excerpt: uncached]
  double uncached = fastest_seconds(
      [&] {
        NoGradGuard no_grad;
        std::vector<int32_t> ids = {0};
        for (int64_t i = 0; i < o.new_tokens; ++i) {
          IntTensor idx({1, static_cast<int64_t>(ids.size())}, ids);
          std::vector<double> logits = model.forward(idx).to_vector();  // (1, t, V): all t positions again
          const int64_t V = model.config().vocab_size;
          int32_t best = 0;
          for (int32_t j = 1; j < V; ++j)
            if (logits[logits.size() - static_cast<size_t>(V - j)] >
                logits[logits.size() - static_cast<size_t>(V - best)])
              best = j;
          ids.push_back(best);
        }
        uncached_ids = ids;
      },
      o.repeats);
  // [/excerpt]
  s.cached_tokens_per_s = static_cast<double>(o.new_tokens) / cached;
  s.uncached_tokens_per_s = static_cast<double>(o.new_tokens) / uncached;
  s.same_tokens = cached_ids == uncached_ids ? 1 : 0;
  return done[o.new_tokens] = s;
}

}  // namespace

KvCacheResult run_lesson_kv_cache(std::ostream& out, const KvCacheOptions& o) {
  KvCacheResult r;
  heading(out, 1, "What the cache holds", "缓存里存的是什么");
  out << tr(out,
            "per token: a key and a value vector (D numbers each) for every key/value head of every\n"
            "layer: 2 x L x H_kv x D numbers. Standard attention has H_kv = H (one K/V head per query\n"
            "head), grouped-query attention (GQA) lets groups of query heads share one K/V head\n"
            "(1 < H_kv < H), multi-query attention (MQA) has a single one (H_kv = 1).\n",
            "每个词元：每一层的每个 K/V 头各存一个键向量和一个值向量（各 D 个数），共 2 × L × H_kv × D 个数。\n"
            "多头注意力（MHA）里 H_kv = H（每个查询头有自己的 K/V 头）；分组查询注意力（GQA）让一组查询头\n"
            "共用一个 K/V 头（1 < H_kv < H）；多查询注意力（MQA）只有一个 K/V 头（H_kv = 1）。\n");

  heading(out, 2, "The count against the engine's own cache", "公式与引擎自己的缓存对比");
  {
    GPT model(small_config());
    NoGradGuard no_grad;
    GPTCache cache;
    std::vector<int32_t> ids(100);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i % 65);
    // [excerpt: engine]
    model.forward(IntTensor({1, 100}, ids), cache);  // 100 tokens into an empty cache
    int64_t numbers = 0;
    for (const KVCache& layer : cache.layers) numbers += layer.k.numel() + layer.v.numel();  // (B, H, S, D) each
    // [/excerpt]
    const GPTConfig& c = model.config();
    r.engine_bytes_per_token = 4.0 * static_cast<double>(numbers) / static_cast<double>(cache.length());
    r.formula_bytes_per_token = kv_bytes_per_token(c.n_layer, c.n_head, c.n_embd / c.n_head, 4);
    out << tr(out, "a GPT with L = ", "一个 GPT，L = ") << c.n_layer << tr(out, ", H = ", "，H = ") << c.n_head
        << tr(out, ", D = ", "，D = ") << c.n_embd / c.n_head
        << tr(out, ", float32, after 100 tokens: the cache holds ", "，float32，读入 100 个词元后缓存里有 ")
        << fmt_count(numbers) << tr(out, " numbers,\n  ", " 个数，\n  每个词元 ") << fmt(r.engine_bytes_per_token, 0)
        << tr(out, " bytes per token; the formula 2 x L x H x D x 4 gives ", " 字节；公式 2 × L × H × D × 4 得 ")
        << fmt(r.formula_bytes_per_token, 0) << "\n";
  }

  heading(out, 3, "Bytes per token and per full context", "每个词元和整段上下文的字节数");
  const std::vector<Shape> shapes = {{"GPT-2 small", "GPT-2 small", 12, 12, 768, 1024, 4},
                                     {"7B-class", "7B 级", 32, 32, 4096, 4096, 8}};
  for (const Shape& s : shapes) {
    const int64_t D = s.d_model / s.heads;
    out << tr(out, s.name, s.name_zh) << tr(out, ": L = ", "：L = ") << s.layers << tr(out, ", H = ", "，H = ")
        << s.heads << tr(out, ", d_model = ", "，d_model = ") << s.d_model << tr(out, ", D = ", "，D = ") << D
        << tr(out, ", context ", "，上下文 ") << s.context << "\n";
    out << tr(out, "                   H_kv   per token (fp16)   context (fp16)   context (fp32)\n",
              "                   H_kv    每词元（fp16）     整段（fp16）     整段（fp32）\n");
    struct Variant {
      const char* en;
      const char* zh;
      int64_t kv;
    };
    for (const Variant& v : {Variant{"  standard (MHA) ", "  MHA            ", s.heads},
                             Variant{"  GQA            ", "  GQA            ", s.gqa_kv_heads},
                             Variant{"  MQA            ", "  MQA            ", 1}}) {
      const double per16 = kv_bytes_per_token(s.layers, v.kv, D, 2);
      const double ctx16 = per16 * static_cast<double>(s.context), ctx32 = 2 * ctx16;
      r.per_token_fp16.push_back(per16);
      r.context_fp16.push_back(ctx16);
      std::string kv = std::to_string(v.kv), a = fmt_bytes(per16), b = fmt_bytes(ctx16), c = fmt_bytes(ctx32);
      out << tr(out, v.en, v.zh) << std::string(5 - kv.size(), ' ') << kv << "  " << std::string(17 - a.size(), ' ')
          << a << "  " << std::string(15 - b.size(), ' ') << b << "  " << std::string(15 - c.size(), ' ') << c << "\n";
    }
  }
  out << tr(out, "at the 7B shape one full context of standard attention needs ",
            "在 7B 尺寸下，MHA 的一整段上下文需要 ")
      << fmt_bytes(r.context_fp16[3])
      << tr(out, " of cache per sequence;\nGQA with 8 K/V heads cuts it ",
            " 的缓存（每条序列），\n是 8 个 K/V 头的 GQA 的 ")
      << fmt(r.context_fp16[3] / r.context_fp16[4], 0) << tr(out, "x, MQA ", " 倍、MQA 的 ")
      << fmt(r.context_fp16[3] / r.context_fp16[5], 0)
      << tr(out, "x (the 7B weights in fp16 are ", " 倍（7B 个 fp16 权重本身就有 ") << fmt_bytes(7e9 * 2)
      << tr(out, ", whatever the attention)\n", "，与注意力的种类无关）\n");

  heading(out, 4, "Measured: sampling with and without the cache", "实测：有缓存和没有缓存的采样");
  const Sampling s = measure_sampling(o);
  r.cached_tokens_per_s = s.cached_tokens_per_s;
  r.uncached_tokens_per_s = s.uncached_tokens_per_s;
  r.same_tokens = s.same_tokens > 0;
  out << tr(out, "the GPT of step 2 (untrained), greedy, ", "第 2 步的 GPT（未训练），贪心解码，") << o.new_tokens
      << tr(out, " new tokens after a one-token prompt; yours will differ:\n",
            " 个新词元，提示只有一个词元；你的机器上数字会不同：\n")
      << tr(out, "  GPT::generate, KV cache:           ", "  GPT::generate，有 KV 缓存：        ")
      << fmt(s.cached_tokens_per_s, 0) << tr(out, " tokens/s\n", " 词元/秒\n")
      << tr(out, "  the whole prefix again per token:  ", "  每个词元重算整个前缀：            ")
      << fmt(s.uncached_tokens_per_s, 0) << tr(out, " tokens/s\n", " 词元/秒\n")
      << tr(out, "  the cache is ", "  有缓存时的速度是无缓存时的 ")
      << fmt(s.cached_tokens_per_s / s.uncached_tokens_per_s, 1)
      << tr(out, "x faster; both drew the same tokens: ", " 倍；两种方式得到的词元相同：")
      << (r.same_tokens ? tr(out, "yes", "是") : tr(out, "no", "否")) << "\n";
  return r;
}

KvCacheResult run_lesson_kv_cache(std::ostream& out) { return run_lesson_kv_cache(out, {}); }

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_kv_cache() {
  return {"kv-cache", "The KV cache's memory: bytes per token for MHA, GQA, MQA; sampling with and without it",
          "KV 缓存的内存：MHA、GQA、MQA 每个词元的字节数；有无缓存的采样速度",
          printing([](std::ostream& out) { return run_lesson_kv_cache(out); }),
          /*slow=*/true};
}

}  // namespace sf::lessons

// Memory accounting (autograd/memory.h) and activation recomputation (autograd/checkpoint.h) on
// small GPTs: the breakdown accounts for every byte a forward adds, and a recomputed model gives
// the same loss and gradients while keeping far less for backward.
#include <doctest/doctest.h>

#include <sys/resource.h>

#include <algorithm>
#include <string>
#include <vector>

#include "autograd/checkpoint.h"
#include "autograd/memory.h"
#include "autograd/ops.h"
#include "nn/gpt.h"

using namespace sf;

static GPTConfig memory_gpt(AttentionKernel kernel = AttentionKernel::stored) {
  GPTConfig c;
  c.vocab_size = 17;
  c.block_size = 32;
  c.n_layer = 3;
  c.n_head = 2;
  c.n_embd = 32;
  c.attention = kernel;
  c.seed = 5;
  return c;
}

static IntTensor tokens(int64_t B, int64_t T, int64_t V, uint64_t seed) {
  Generator gen(seed);
  IntTensor t({B, T}, std::vector<int32_t>(static_cast<size_t>(B * T)));
  for (int64_t i = 0; i < B * T; ++i) t[i] = static_cast<int32_t>(gen.randint(V));
  return t;
}

TEST_CASE("saved_by_op accounts for every byte a forward keeps, by the op that made it") {
  for (AttentionKernel kernel : {AttentionKernel::stored, AttentionKernel::tiled}) {
    INFO("attention " << attention_kernel_name(kernel));
    GPT model(memory_gpt(kernel));
    const IntTensor x = tokens(2, 32, 17, 1), y = tokens(2, 32, 17, 2);
    const size_t before = tensor_memory().live;
    Tensor loss = model.loss(x, y);
    const size_t after = tensor_memory().live;
    const std::vector<SavedBytes> saved = saved_by_op(loss);
    size_t total = 0;
    for (const SavedBytes& row : saved) total += row.bytes;
    CHECK(total == after - before);  // nothing the forward keeps is left out, nothing counted twice
    // Attention's kept probabilities: 3 layers x (B 2, H 2, T 32, S 32) floats under "stored".
    size_t attention = 0;
    for (const SavedBytes& row : saved)
      if (row.op.rfind("attention", 0) == 0) attention = row.bytes;
    const size_t probs = 3 * 2 * 2 * 32 * 32 * sizeof(float), outputs = 3 * 2 * 32 * 32 * sizeof(float);
    if (kernel == AttentionKernel::stored) CHECK(attention > probs);
    else CHECK(attention < outputs + probs / 4);  // outputs and one log-sum-exp per row
    loss.backward();
    CHECK(saved_by_op(loss).size() == 1);  // backward freed the graph: only the loss itself is left
  }
}

TEST_CASE("memory_report splits the live tensors into parameters, gradients, state and saved") {
  GPT model(memory_gpt());
  const IntTensor x = tokens(2, 32, 17, 3), y = tokens(2, 32, 17, 4);
  model.loss(x, y).backward();  // every parameter now has its .grad
  const NamedTensors params = model.named_parameters();
  Tensor loss = model.loss(x, y);
  const MemoryReport r = memory_report(loss, params, {});
  const size_t param_bytes = static_cast<size_t>(model.num_parameters()) * sizeof(float);
  CHECK(r.parameters >= param_bytes);
  CHECK(r.parameters < param_bytes + 64 * params.size());  // one block, rounded
  CHECK(r.gradients == r.parameters);                      // flattened: the gradients are one block too
  CHECK(r.saved_total > 0);
  CHECK(r.parameters + r.gradients + r.saved_total + r.other_tensors == r.tensors.live);
  const std::string text = format_memory_report(r);
  CHECK(text.find("saved for backward") != std::string::npos);
  CHECK(text.find("attention_packed") != std::string::npos);
}

TEST_CASE("recomputed half-blocks give the same loss and gradients and keep only the halves' inputs") {
  const IntTensor x = tokens(2, 32, 17, 5), y = tokens(2, 32, 17, 6);
  for (NormPlacement norm : {NormPlacement::pre, NormPlacement::post}) {
    INFO(norm_name(norm) << "-LN");
    GPTConfig plain = memory_gpt();
    plain.norm = norm;
    GPTConfig recomputed = plain;
    recomputed.recompute = true;
    GPT a(plain), b(recomputed);
    Tensor loss_a = a.loss(x, y), loss_b = b.loss(x, y);
    CHECK(loss_a.item() == loss_b.item());
    size_t kept_a = 0, kept_b = 0, checkpoint_buffers = 0, checkpoint_bytes = 0;
    for (const SavedBytes& row : saved_by_op(loss_a)) kept_a += row.bytes;
    for (const SavedBytes& row : saved_by_op(loss_b)) {
      kept_b += row.bytes;
      if (row.op == "checkpoint") {
        checkpoint_buffers = row.buffers;
        checkpoint_bytes = row.bytes;
      }
    }
    CHECK(kept_b * 4 < kept_a);  // the blocks' insides are gone
    // What the checkpoints made: each block's two halves' outputs, the (B, T, C) residual stream
    // between the attention and the MLP sublayer and after the MLP one; nothing else.
    CHECK(checkpoint_buffers == 2 * 3);
    CHECK(checkpoint_bytes == 2 * 3 * 2 * 32 * 32 * sizeof(float));
    loss_a.backward();
    loss_b.backward();
    const NamedTensors pa = a.named_parameters(), pb = b.named_parameters();
    REQUIRE(pa.size() == pb.size());
    for (size_t i = 0; i < pa.size(); ++i) {
      INFO(pa[i].first);
      const std::vector<double> ga = pa[i].second.grad().to_vector(), gb = pb[i].second.grad().to_vector();
      CHECK(ga == gb);  // the same computation run twice: the same bits
    }
  }
}

TEST_CASE("a block's two halves split its parameters between them") {
  GPT model(memory_gpt());
  const SelfAttentionBlock& block = model.h[0];
  const std::vector<Tensor> all = block.parameters();
  std::vector<Tensor> halves = block.attention_half_parameters();
  for (const Tensor& p : block.mlp_half_parameters()) halves.push_back(p);
  REQUIRE(halves.size() == all.size());
  for (const Tensor& p : all) {  // every one in exactly one half's list
    size_t found = 0;
    for (const Tensor& q : halves) found += q.impl() == p.impl() ? 1 : 0;
    CHECK(found == 1);
  }
}

TEST_CASE("recompute with dropout is refused in one line") {
  GPTConfig c = memory_gpt();
  c.recompute = true;
  c.dropout = 0.1;
  CHECK_THROWS_WITH_AS(GPT{c},
                       "model: recompute needs dropout 0 (recomputing a block would draw new dropout masks), "
                       "got dropout 0.1",
                       ConfigError);
}

TEST_CASE("checkpoint without grad mode is the plain call") {
  Tensor w = Tensor::ones({2, 2}).requires_grad_();
  Tensor x = Tensor::ones({1, 2});
  NoGradGuard no_grad;
  Tensor y = checkpoint([w](const Tensor& in) { return matmul(in, w); }, x, {w});
  CHECK_FALSE(y.requires_grad());
  CHECK(y.to_vector() == std::vector<double>{2, 2});
}

TEST_CASE("the buffer cache's slack is the high-water mark, 4 to 96 MiB, 16 MiB from 1 GiB") {
  constexpr size_t MiB = size_t(1) << 20;
  CHECK(buffer_cache_slack(0) == 4 * MiB);
  CHECK(buffer_cache_slack(3 * MiB) == 4 * MiB);
  CHECK(buffer_cache_slack(13 * MiB) == 13 * MiB);  // bench_gpt's tiny: a 13.4 MiB mark
  CHECK(buffer_cache_slack(64 * MiB) == 64 * MiB);
  CHECK(buffer_cache_slack(100 * MiB) == 96 * MiB);
  CHECK(buffer_cache_slack(600 * MiB) == 96 * MiB);  // bench_gpt's medium: a 582 MiB mark
  CHECK(buffer_cache_slack(1023 * MiB) == 96 * MiB);
  CHECK(buffer_cache_slack(1024 * MiB) == 16 * MiB);  // from 1 GiB (GPT-2 size) 16 MiB
}

TEST_CASE("the buffer cache keeps live and kept buffers within the most there has been live, and its slack") {
  // Nothing in this process resets the peak, so TensorMemory::peak is the high-water mark.
  {
    Tensor a = Tensor::empty({int64_t(4) << 20}), b = Tensor::empty({int64_t(4) << 20});  // 16 MiB each
  }
  TensorMemory m = tensor_memory();
  CHECK(m.live + m.cached <= m.peak + buffer_cache_slack(m.peak));
  Tensor c = Tensor::empty({int64_t(8) << 20});  // 32 MiB: a size not kept, a new high-water mark
  m = tensor_memory();
  CHECK(m.live + m.cached <= m.peak + buffer_cache_slack(m.peak));
  Tensor d = Tensor::empty({int64_t(3) << 20});  // 12 MiB: kept buffers are released for it
  m = tensor_memory();
  CHECK(m.live + m.cached <= m.peak + buffer_cache_slack(m.peak));
}

#if !defined(__SANITIZE_ADDRESS__)  // under ASan the cache keeps nothing
static long minor_page_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

TEST_CASE("forwards without a graph reuse their buffers: a second one maps almost no fresh pages") {
  // As `scratchformer eval` runs the default model: 256 windows of 64 tokens in one forward, no
  // graph. Each activation is freed as soon as the next op has read it, so the high-water mark is
  // only the few buffers live at once; the cache's slack must still keep what one forward frees
  // for the next. CTest runs each case in a process of its own, so the mark is this forward's.
  GPTConfig c;
  c.vocab_size = 65;
  c.block_size = 64;
  c.n_layer = 4;
  c.n_head = 4;
  c.n_embd = 128;
  c.seed = 3;
  GPT model(c);
  model.eval();
  NoGradGuard no_grad;
  const IntTensor x = tokens(256, 64, 65, 4);
  const std::vector<double> first_logits = model.forward(x).to_vector();  // its logits freed too
  const long before = minor_page_faults();
  const Tensor second = model.forward(x);
  const long faults = minor_page_faults() - before;
  CHECK(second.to_vector() == first_logits);
  // With an eighth of the mark as the slack, none of the larger buffers were kept and the second
  // forward faulted all of them in afresh (bench/README.md, the leftover-rows notes).
  CHECK(faults < 1000);
}

TEST_CASE("at a new high-water mark, a buffer of a new size leaves the kept ones within the slack") {
  // A mark at least 128 MiB over the live bytes (the slack is then its full 16 MiB); the buffers
  // are never written, so they take no memory.
  const TensorMemory start = tensor_memory();
  Tensor big = Tensor::empty({static_cast<int64_t>((start.peak - start.live) / 4) + (int64_t(32) << 20)});
  { Tensor one = Tensor::empty({int64_t(1) << 18}); }  // 1 MiB, made and freed at the mark: kept
  CHECK(tensor_memory().cached >= size_t(1) << 20);
  Tensor two = Tensor::empty({int64_t(1) << 19});  // 2 MiB, a size not kept: a new mark
  const TensorMemory m = tensor_memory();
  CHECK(m.live == m.peak);
  // Within the mark alone the cache would now keep nothing (live is the mark); with the slack it
  // releases kept buffers only down to 16 MiB, none of them larger than that, so some stay.
  CHECK(m.cached > 0);
  CHECK(m.cached <= buffer_cache_slack(m.peak));
}
#endif

TEST_CASE("zero_grad gives a large flat model gradients that take memory only as backward writes them") {
  GPTConfig c = memory_gpt();
  c.n_embd = 384;  // 5.3M parameters: a gradient buffer of 20 MiB, mapped fresh from the system
  c.n_head = 4;
  GPT model(c);
  REQUIRE(model.flat_grads().storage()->nbytes() >= Module::kFreshGradBytes);
  const IntTensor x = tokens(2, 32, 17, 7), y = tokens(2, 32, 17, 8);
  REQUIRE(model.is_flat());
  for (const auto& [name, p] : model.named_parameters()) CHECK(p.grad().impl()->pages_unwritten);  // fresh
  model.loss(x, y).backward();
  const NamedTensors params = model.named_parameters();
  const std::vector<double> first = model.flat_grads().to_vector();
  const MemoryReport after_backward = memory_report(Tensor(), params, {});
  CHECK(after_backward.gradients_resident == after_backward.gradients);  // every page written
  const size_t kept_before = tensor_memory().cached;
  model.zero_grad();
  CHECK(tensor_memory().cached == kept_before);  // the old buffer left the process, not kept
  const MemoryReport zeroed = memory_report(Tensor(), params, {});
  CHECK(zeroed.gradients == after_backward.gradients);
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
  CHECK(zeroed.gradients_resident * 10 < zeroed.gradients);  // glibc maps it: no page in memory yet
#endif
  for (const auto& [name, p] : params) {
    INFO(name);
    CHECK(p.grad().storage() == model.flat_grads().storage());  // views into the new buffer
    CHECK(p.grad().impl()->pages_unwritten);                    // to be cleared for writing before the first add
  }
  for (double g : model.flat_grads().to_vector()) REQUIRE(g == 0.0);
  model.loss(x, y).backward();
  CHECK(model.flat_grads().to_vector() == first);  // the same gradients, bit for bit
  for (const auto& [name, p] : params) {
    INFO(name);
    CHECK_FALSE(p.grad().impl()->pages_unwritten);  // every parameter's gradient arrived
  }
}

TEST_CASE("zero_grad clears a small flat model's gradient buffer where it is") {
  GPT model(memory_gpt());  // 40K parameters
  const IntTensor x = tokens(2, 32, 17, 7), y = tokens(2, 32, 17, 8);
  REQUIRE(model.is_flat());
  REQUIRE(model.flat_grads().storage()->nbytes() < Module::kFreshGradBytes);
  model.loss(x, y).backward();
  const std::vector<double> first = model.flat_grads().to_vector();
  const void* buffer = model.flat_grads().storage()->data();
  model.zero_grad();
  CHECK(model.flat_grads().storage()->data() == buffer);  // the same memory
  for (double g : model.flat_grads().to_vector()) REQUIRE(g == 0.0);
  for (const auto& [name, p] : model.named_parameters()) {
    INFO(name);
    CHECK(p.grad().storage() == model.flat_grads().storage());  // still views into it
    CHECK_FALSE(p.grad().impl()->pages_unwritten);              // written (zeros): added to as they are
  }
  model.loss(x, y).backward();
  CHECK(model.flat_grads().to_vector() == first);  // the same gradients, bit for bit
  model.zero_grad();
  for (double g : model.flat_grads().to_vector()) REQUIRE(g == 0.0);
}

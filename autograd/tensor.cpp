// tensor.cpp: Tensor creation, access, printing, the random generator and grad mode.
#include "autograd/tensor.h"

#include <algorithm>
#include <atomic>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <iomanip>
#include <mutex>
#include <unordered_map>
#include <ostream>
#include <sstream>

#include "autograd/cpu/threads.h"
#include "autograd/graph.h"
#include "autograd/ops.h"

namespace sf {

const char* dtype_name(DType dtype) { return dtype == DType::f64 ? "float64" : "float32"; }
size_t dtype_size(DType dtype) { return dtype == DType::f64 ? 8 : 4; }

std::string shape_str(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + ")";
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const char* op) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw ShapeError(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for a tensor of rank " +
                     std::to_string(rank));
  return a;
}

// ---- Storage ----

// A small caching allocator: a training step allocates the same buffer sizes every time, so
// freed buffers are kept by size and handed out again, which saves the page faults and zeroing
// of fresh memory (like PyTorch's CPU caching). At most kCacheLimit bytes are held, and only as
// much as keeps the live and the kept buffers together within the most live bytes there have
// been (the high-water mark; zeroed buffers count twice, see g_zeroed_bytes) plus a little slack
// (buffer_cache_slack): the next step finds the buffers it needs, and the tensors take at most a
// little more memory than at their busiest moment. A freed buffer that does not fit makes room by
// releasing kept buffers of other sizes (the newest free is the likeliest to be asked for again).
namespace {
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kCacheLimit = 0;  // under ASan every buffer is really freed, so misuse is caught
#else
constexpr size_t kCacheLimit = size_t(1) << 30;
#endif
// How far over the high-water mark the kept buffers may go (buffer_cache_slack): as much as the
// mark itself, at least kCacheSlackMin and at most kCacheSlackMax. Within the mark alone, a step at
// its busiest that makes a buffer of a size not kept has to release kept buffers of other sizes,
// which the next step then maps and faults in afresh: about 3,000 page faults a step of bench_gpt's
// small shape. With the slack the kept buffers serve every step (bench/README.md, the cache-slack
// notes). The floor is for small models (a tiny step mapped a 1 MiB buffer afresh without it). As
// much as the mark is for evaluation, forwards without a graph: each activation is freed as soon
// as the next op has read it, so the mark is only the few buffers live at once, and an eighth of
// it kept none of the larger ones: `scratchformer eval` mapped every buffer afresh for every
// forward (bench/README.md, the leftover-rows notes). The ceiling depends on the mark: up to
// kLargeMark the slack may reach kCacheSlackMax, so a model of a few hundred MiB (bench_gpt's
// medium) keeps the buffers its backward frees while the zeroed gradients still count against the
// bound, instead of mapping them afresh in the next forward; from kLargeMark on (GPT-2 size), where
// memory limits what a machine can train, the slack stays at kLargeMarkSlack and the peak at what
// it was.
constexpr size_t kCacheSlackMin = size_t(4) << 20, kCacheSlackMax = size_t(96) << 20;
constexpr size_t kLargeMark = size_t(1) << 30, kLargeMarkSlack = size_t(16) << 20;
constexpr size_t kSmallest = 4096;  // below this, malloc is fast enough: no caching
constexpr size_t kNoSize = 0;       // no buffer has this size

struct BufferCache {
  std::mutex mutex;
  std::unordered_map<size_t, std::vector<void*>> free;  // rounded size -> buffers
  size_t held = 0;
#if defined(__GLIBC__)
  // glibc serves a freed buffer of up to 32 MiB again from its heap and keeps the memory resident
  // after free (its mmap threshold rises with every large free). Buffers from 1 MiB up are mapped
  // and unmapped instead, so what the cache releases goes back to the system.
  BufferCache() { mallopt(M_MMAP_THRESHOLD, 1 << 20); }
#endif
  // Releases kept buffers of sizes other than `keep` (kNoSize: of any size) until held <= target.
  void release_down_to(size_t target, size_t keep) {
    for (auto it = free.begin(); it != free.end() && held > target; ++it) {
      if (it->first == keep) continue;
      while (!it->second.empty() && held > target) {
        std::free(it->second.back());
        it->second.pop_back();
        held -= it->first;
      }
    }
  }
  ~BufferCache() {
    for (auto& [size, list] : free)
      for (void* p : list) std::free(p);
  }
};
BufferCache& buffer_cache() {
  static BufferCache cache;
  return cache;
}

// Bytes of the live buffers (rounded as allocated) and the most there have been: see TensorMemory.
// g_peak_all_time is never reset: the cache's high-water mark.
std::atomic<size_t> g_live_bytes{0}, g_peak_bytes{0}, g_peak_all_time{0};
void raise_to(std::atomic<size_t>& peak, size_t value) {
  size_t seen = peak.load();
  while (value > seen && !peak.compare_exchange_weak(seen, value)) {}
}
void count_allocation(size_t rounded) {
  const size_t live = g_live_bytes.fetch_add(rounded) + rounded;
  raise_to(g_peak_bytes, live);
  raise_to(g_peak_all_time, live);
}

// Bytes of the live zeroed buffers (Storage::Zeroed). They count as live, but their pages come
// into memory only as they are written (a gradient buffer, during backward), so the cache leaves
// room for all of them: without this it would fill the memory they do not take yet, and the
// process would hold as much as before when backward has written them.
std::atomic<size_t> g_zeroed_bytes{0};

// How many bytes the cache may keep now: live, zeroed and kept buffers within the high-water mark
// and its slack.
size_t cache_room() {
  const size_t mark = g_peak_all_time.load(), bound = mark + buffer_cache_slack(mark);
  const size_t used = g_live_bytes.load() + g_zeroed_bytes.load();
  return bound > used ? bound - used : 0;
}
}  // namespace

size_t buffer_cache_slack(size_t high_water_mark) {
  if (high_water_mark >= kLargeMark) return kLargeMarkSlack;
  return std::clamp(high_water_mark, kCacheSlackMin, kCacheSlackMax);
}

TensorMemory tensor_memory() {
  BufferCache& cache = buffer_cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  return {g_live_bytes.load(), g_peak_bytes.load(), cache.held};
}

void reset_peak_tensor_bytes() { g_peak_bytes.store(g_live_bytes.load()); }

Storage::Storage(size_t nbytes) : nbytes_(nbytes) {
  size_t rounded = nbytes <= 64 ? 64 : (nbytes + 63) / 64 * 64;
  count_allocation(rounded);
  if (rounded >= kSmallest) {
    BufferCache& cache = buffer_cache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    auto it = cache.free.find(rounded);
    if (it != cache.free.end() && !it->second.empty()) {
      data_ = it->second.back();
      it->second.pop_back();
      cache.held -= rounded;
      return;
    }
    // A new buffer: the kept ones shrink so that live and kept stay within the high-water mark
    // (without this, a step's first optimizer state would pile onto a full cache).
    cache.release_down_to(cache_room(), kNoSize);
  }
  data_ = std::aligned_alloc(64, rounded);
  if (!data_) throw std::bad_alloc();
}

Storage::Storage(size_t nbytes, Zeroed) : nbytes_(nbytes) {
  size_t rounded = nbytes <= 64 ? 64 : (nbytes + 63) / 64 * 64;
  count_allocation(rounded);
  g_zeroed_bytes.fetch_add(rounded);
  buffer_cache();  // its constructor sets glibc's mmap threshold
  // calloc skips the zeroing for memory fresh from the system (glibc maps blocks of 1 MiB and up,
  // see BufferCache), so no page is touched here; 64 spare bytes make room to align.
  zeroed_block_ = std::calloc(rounded + 64, 1);
  if (!zeroed_block_) throw std::bad_alloc();
  const uintptr_t address = reinterpret_cast<uintptr_t>(zeroed_block_);
  data_ = reinterpret_cast<void*>((address + 63) / 64 * 64);
}

Storage::~Storage() {
  size_t rounded = nbytes_ <= 64 ? 64 : (nbytes_ + 63) / 64 * 64;
  g_live_bytes.fetch_sub(rounded);
  if (zeroed_block_) {
    g_zeroed_bytes.fetch_sub(rounded);
    std::free(zeroed_block_);
    return;
  }
  if (rounded >= kSmallest) {
    BufferCache& cache = buffer_cache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    const size_t room = std::min(kCacheLimit, cache_room());
    if (rounded <= room) {
      if (cache.held + rounded > room) cache.release_down_to(room - rounded, rounded);
      if (cache.held + rounded <= room) {
        cache.free[rounded].push_back(data_);
        cache.held += rounded;
        return;
      }
    }
  }
  std::free(data_);
}

// ---- Generator: xoshiro256** seeded through splitmix64 ----

static uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

Generator::Generator(uint64_t seed) {
  for (auto& s : s_) s = splitmix64(seed);
}
uint64_t Generator::next_u64() {
  uint64_t result = rotl(s_[1] * 5, 7) * 9;
  uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}
double Generator::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
double Generator::normal() {
  double u1 = uniform(), u2 = uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}
int64_t Generator::randint(int64_t n) {
  if (n <= 0) throw Error("Generator::randint: n must be positive, got " + std::to_string(n));
  return static_cast<int64_t>(uniform() * static_cast<double>(n)) % n;
}
void Generator::set_state(const std::vector<uint64_t>& s) {
  if (s.size() != 4) throw Error("Generator::set_state: expected 4 words, got " + std::to_string(s.size()));
  for (int i = 0; i < 4; ++i) s_[i] = s[i];
}

// ---- grad mode ----

static thread_local bool g_grad_enabled = true;
bool grad_enabled() { return g_grad_enabled; }
NoGradGuard::NoGradGuard() : previous_(g_grad_enabled) { g_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { g_grad_enabled = previous_; }
EnableGradGuard::EnableGradGuard() : previous_(g_grad_enabled) { g_grad_enabled = true; }
EnableGradGuard::~EnableGradGuard() { g_grad_enabled = previous_; }

// ---- creation ----

Tensor Tensor::empty(const Shape& shape, DType dtype) {
  for (int64_t d : shape)
    if (d < 0) throw ShapeError("empty: negative dimension in shape " + shape_str(shape));
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = shape;
  impl->dtype = dtype;
  impl->storage = std::make_shared<Storage>(static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype));
  return Tensor(std::move(impl));
}

Tensor Tensor::zeros(const Shape& shape, DType dtype) {
  Tensor t = empty(shape, dtype);
  std::memset(t.storage()->data(), 0, t.storage()->nbytes());
  return t;
}

Tensor Tensor::full(const Shape& shape, double value, DType dtype) {
  Tensor t = empty(shape, dtype);
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (int64_t i = 0, n = t.numel(); i < n; ++i) p[i] = static_cast<T>(value);
  });
  return t;
}

Tensor Tensor::ones(const Shape& shape, DType dtype) { return full(shape, 1.0, dtype); }
Tensor Tensor::scalar(double value, DType dtype) { return full({}, value, dtype); }

Tensor Tensor::from_vector(const std::vector<double>& values, const Shape& shape, DType dtype) {
  if (static_cast<int64_t>(values.size()) != shape_numel(shape))
    throw ShapeError("from_vector: " + std::to_string(values.size()) + " values do not fill shape " + shape_str(shape));
  Tensor t = empty(shape, dtype);
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<T>(values[i]);
  });
  return t;
}

Tensor Tensor::randn(const Shape& shape, Generator& gen, double stddev, DType dtype) {
  Tensor t = empty(shape, dtype);
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (int64_t i = 0, n = t.numel(); i < n; ++i) p[i] = static_cast<T>(gen.normal() * stddev);
  });
  return t;
}

Tensor Tensor::rand(const Shape& shape, Generator& gen, double low, double high, DType dtype) {
  Tensor t = empty(shape, dtype);
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (int64_t i = 0, n = t.numel(); i < n; ++i) p[i] = static_cast<T>(low + (high - low) * gen.uniform());
  });
  return t;
}

Tensor Tensor::arange(int64_t n, DType dtype) {
  Tensor t = empty({n}, dtype);
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i) t.data<T>()[i] = static_cast<T>(i);
  });
  return t;
}

Tensor Tensor::view_of(std::shared_ptr<Storage> storage, size_t offset, const Shape& shape, DType dtype) {
  size_t need = (offset + static_cast<size_t>(shape_numel(shape))) * dtype_size(dtype);
  if (!storage || need > storage->nbytes())
    throw ShapeError("view_of: shape " + shape_str(shape) + " at offset " + std::to_string(offset) +
                     " does not fit in the buffer");
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = shape;
  impl->dtype = dtype;
  impl->storage = std::move(storage);
  impl->offset = offset;
  return Tensor(std::move(impl));
}

// ---- access ----

TensorImpl& Tensor::checked() const {
  if (!impl_) throw Error("use of an undefined Tensor");
  return *impl_;
}
const Shape& Tensor::shape() const { return checked().shape; }
int64_t Tensor::numel() const { return shape_numel(checked().shape); }
DType Tensor::dtype() const { return checked().dtype; }
const std::shared_ptr<Storage>& Tensor::storage() const { return checked().storage; }

int64_t Tensor::size(int64_t axis) const { return shape()[static_cast<size_t>(normalize_axis(axis, dim(), "size"))]; }

double Tensor::item() const {
  if (numel() != 1)
    throw ShapeError("item: tensor of shape " + shape_str(shape()) + " has " + std::to_string(numel()) +
                     " elements, expected 1");
  return dispatch(dtype(), [&](auto tag) { return static_cast<double>(data<decltype(tag)>()[0]); });
}

double Tensor::at(const std::vector<int64_t>& index) const {
  const Shape& s = shape();
  if (index.size() != s.size())
    throw ShapeError("at: index of rank " + std::to_string(index.size()) + " for shape " + shape_str(s));
  int64_t flat = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    int64_t k = index[i] < 0 ? index[i] + s[i] : index[i];
    if (k < 0 || k >= s[i])
      throw ShapeError("at: index " + std::to_string(index[i]) + " out of range for axis " + std::to_string(i) +
                       " of shape " + shape_str(s));
    flat = flat * s[i] + k;
  }
  return dispatch(dtype(), [&](auto tag) { return static_cast<double>(data<decltype(tag)>()[flat]); });
}

std::vector<double> Tensor::to_vector() const {
  std::vector<double> out(static_cast<size_t>(numel()));
  dispatch(dtype(), [&](auto tag) {
    const auto* p = data<decltype(tag)>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(p[i]);
  });
  return out;
}

// ---- autograd handles ----

bool Tensor::requires_grad() const { return checked().requires_grad; }
Tensor& Tensor::requires_grad_(bool on) {
  if (!is_leaf()) throw Error("requires_grad_: only leaf tensors can change requires_grad (use detach() first)");
  checked().requires_grad = on;
  return *this;
}
bool Tensor::is_leaf() const { return checked().grad_fn == nullptr; }
Tensor Tensor::grad() const { return Tensor(checked().grad); }
void Tensor::set_grad(const Tensor& g) {
  if (g.defined() && (g.shape() != shape() || g.dtype() != dtype()))
    throw ShapeError("set_grad: gradient " + shape_str(g.shape()) + " " + dtype_name(g.dtype()) +
                     " does not match tensor " + shape_str(shape()) + " " + dtype_name(dtype()));
  checked().grad = g.impl_ptr();
}
void Tensor::zero_grad() {
  auto& g = checked().grad;
  if (!g) return;
  char* bytes = static_cast<char*>(g->storage->data()) + g->offset * dtype_size(g->dtype);
  parallel_zero(bytes, static_cast<size_t>(shape_numel(g->shape)) * dtype_size(g->dtype));
}
void Tensor::retain_grad() { checked().retains_grad = true; }
const std::shared_ptr<Node>& Tensor::grad_fn() const { return checked().grad_fn; }

Tensor Tensor::detach() const {
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = shape();
  impl->dtype = dtype();
  impl->storage = storage();
  impl->offset = checked().offset;
  return Tensor(std::move(impl));
}

Tensor Tensor::clone() const {
  Tensor t = empty(shape(), dtype());
  char* to = static_cast<char*>(t.storage()->data());
  const char* from = static_cast<const char*>(storage()->data()) + checked().offset * dtype_size(dtype());
  // long copies (a residual stream's gradient handed to both inputs of an add) on both threads
  parallel_for(numel() * static_cast<int64_t>(dtype_size(dtype())), kElementGrain * 4,
               [&](int64_t b0, int64_t b1) { std::memcpy(to + b0, from + b0, static_cast<size_t>(b1 - b0)); });
  return t;
}

Tensor Tensor::to(DType target) const {
  if (target == dtype()) return *this;
  Tensor out = empty(shape(), target);
  dispatch(dtype(), [&](auto from) {
    dispatch(target, [&](auto to) {
      const auto* src = data<decltype(from)>();
      auto* dst = out.data<decltype(to)>();
      for (int64_t i = 0, n = numel(); i < n; ++i) dst[i] = static_cast<decltype(to)>(src[i]);
    });
  });
  DType source = dtype();
  return record(out, "to", {*this},
                [self = *this, source](const Tensor& dout) { accumulate_grad(self, dout.to(source)); });
}

Tensor& Tensor::set_name(const std::string& name) {
  checked().name = name;
  return *this;
}
const std::string& Tensor::name() const { return checked().name; }

// ---- printing ----

static void print_values(std::ostream& os, const std::vector<double>& v, const Shape& shape, size_t axis,
                         int64_t offset, int64_t stride_prod, bool elide, const PrintOptions& opt, int indent) {
  int64_t n = shape[axis];
  int64_t inner = stride_prod / n;
  os << "[";
  for (int64_t i = 0; i < n; ++i) {
    if (elide && n > 2 * opt.edge_items && i == opt.edge_items) {
      os << (axis + 1 == shape.size() ? "..., " : "...,\n" + std::string(indent + 1, ' '));
      i = n - opt.edge_items;
    }
    if (axis + 1 == shape.size()) {
      os << std::setw(opt.precision + 4) << v[static_cast<size_t>(offset + i)];
    } else {
      print_values(os, v, shape, axis + 1, offset + i * inner, inner, elide, opt, indent + 1);
    }
    if (i + 1 < n) os << (axis + 1 == shape.size() ? ", " : ",\n" + std::string(indent + 1, ' '));
  }
  os << "]";
}

std::string to_string(const Tensor& t, const PrintOptions& opt) {
  if (!t.defined()) return "Tensor(undefined)";
  std::ostringstream os;
  os << std::fixed << std::setprecision(opt.precision);
  os << "Tensor(shape=" << shape_str(t.shape()) << ", dtype=" << dtype_name(t.dtype());
  if (t.requires_grad()) os << ", requires_grad";
  if (t.grad_fn()) os << ", grad_fn=" << t.grad_fn()->op;
  os << ")\n";
  std::vector<double> v = t.to_vector();
  if (t.dim() == 0) {
    os << v[0];
  } else if (t.numel() == 0) {
    os << "[]";
  } else {
    print_values(os, v, t.shape(), 0, 0, t.numel(), t.numel() > opt.threshold, opt, 0);
  }
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << to_string(t); }

}  // namespace sf

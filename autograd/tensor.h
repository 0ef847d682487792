// tensor.h: the Tensor, a cheap handle to an n-dimensional array that remembers how it was made.
//
// A Tensor holds a shape, a contiguous row-major buffer of float32 (training) or float64
// (gradient checks), and, when it requires grad, the graph node that produced it. Copying a
// Tensor copies the handle, not the data (like torch.Tensor). Ops live in ops.h; the graph and
// backward() live in graph.cpp.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/errors.h"

namespace sf {

enum class DType : uint8_t { f32, f64 };
const char* dtype_name(DType dtype);  // "float32" / "float64"
size_t dtype_size(DType dtype);       // 4 / 8

using Shape = std::vector<int64_t>;
std::string shape_str(const Shape& shape);  // "(2, 3)"
int64_t shape_numel(const Shape& shape);
// Turns a possibly negative axis into 0..rank-1; throws ShapeError naming `op` when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank, const char* op);

// A flat, 64-byte aligned buffer shared by a tensor and the views made from it
// (reshape, detach, parameters living in one contiguous block).
class Storage {
 public:
  Storage(size_t nbytes);
  // A zero-filled buffer taken fresh from the system rather than from the cache. Large ones are
  // mapped pages that take no memory until written: a gradient buffer made this way before each
  // forward costs memory only as backward fills it, as torch's gradients set to None do.
  struct Zeroed {};
  Storage(size_t nbytes, Zeroed);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data() { return data_; }
  size_t nbytes() const { return nbytes_; }

 private:
  void* data_ = nullptr;
  void* zeroed_block_ = nullptr;  // the calloc block data_ lies in (Zeroed only), freed directly
  size_t nbytes_ = 0;
};

// Seeded random numbers (xoshiro256**), identical on every platform, with state that can be
// saved in a checkpoint and restored to continue bit for bit.
class Generator {
 public:
  explicit Generator(uint64_t seed = 1337);
  uint64_t next_u64();
  double uniform();            // [0, 1)
  double normal();             // standard normal (Box-Muller, no cached spare: state is just s_)
  int64_t randint(int64_t n);  // uniform in [0, n)
  std::vector<uint64_t> state() const { return {s_[0], s_[1], s_[2], s_[3]}; }
  void set_state(const std::vector<uint64_t>& s);

 private:
  uint64_t s_[4];
};

// What the tensor buffers of this process take: `live` bytes in buffers that some tensor still
// uses, `peak` the most live bytes since the start or reset_peak_tensor_bytes(), and `cached` the
// bytes of freed buffers that Storage keeps to hand out again (its caching allocator). Sizes are
// as allocated (rounded up to 64 bytes). The process's resident memory is these plus the program,
// its libraries and BLAS's own buffers, and what malloc keeps after free.
struct TensorMemory {
  size_t live = 0, peak = 0, cached = 0;
};
TensorMemory tensor_memory();
void reset_peak_tensor_bytes();  // peak = live from now on
// How many bytes the cache may keep beyond the most live bytes there have been (the high-water
// mark, which reset_peak_tensor_bytes does not lower): as much as the mark, 4 to 96 MiB, and
// 16 MiB once the mark reaches 1 GiB.
size_t buffer_cache_slack(size_t high_water_mark);

struct Node;
class Tensor;

struct TensorImpl {
  Shape shape;
  DType dtype = DType::f32;
  std::shared_ptr<Storage> storage;
  size_t offset = 0;  // in elements, for views into a shared buffer
  bool requires_grad = false;
  bool retains_grad = false;  // keep .grad on a non-leaf after backward
  // Set on a parameter's .grad by Module::zero_grad when its pages are fresh from the system and
  // not yet written; the first gradient to arrive clears them for writing (see graph.cpp).
  bool pages_unwritten = false;
  std::shared_ptr<TensorImpl> grad;
  std::shared_ptr<Node> grad_fn;  // null for leaves
  std::string name;               // optional, shown in DOT graphs
};

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor (like an empty optional)
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // ---- creation ----
  static Tensor empty(const Shape& shape, DType dtype = DType::f32);  // uninitialised
  static Tensor zeros(const Shape& shape, DType dtype = DType::f32);
  static Tensor ones(const Shape& shape, DType dtype = DType::f32);
  static Tensor full(const Shape& shape, double value, DType dtype = DType::f32);
  static Tensor scalar(double value, DType dtype = DType::f32);  // shape ()
  static Tensor from_vector(const std::vector<double>& values, const Shape& shape, DType dtype = DType::f32);
  static Tensor randn(const Shape& shape, Generator& gen, double stddev = 1.0, DType dtype = DType::f32);
  static Tensor rand(const Shape& shape, Generator& gen, double low = 0.0, double high = 1.0, DType dtype = DType::f32);
  static Tensor arange(int64_t n, DType dtype = DType::f32);  // 0, 1, ..., n-1
  // A view of `shape` into an existing buffer at element `offset` (parameters in one block).
  static Tensor view_of(std::shared_ptr<Storage> storage, size_t offset, const Shape& shape, DType dtype);

  // ---- what it is ----
  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const;
  int64_t dim() const { return static_cast<int64_t>(shape().size()); }
  int64_t size(int64_t axis) const;  // negative axes count from the end
  int64_t numel() const;
  DType dtype() const;
  const std::shared_ptr<Storage>& storage() const;

  // Raw contiguous data; T must match dtype() (checked).
  template <class T>
  T* data();
  template <class T>
  const T* data() const;
  double item() const;                                 // the value of a one-element tensor
  double at(const std::vector<int64_t>& index) const;  // one element, bounds-checked
  std::vector<double> to_vector() const;               // all values as double, row-major

  // ---- autograd ----
  bool requires_grad() const;
  Tensor& requires_grad_(bool on = true);  // only on leaves
  bool is_leaf() const;
  Tensor grad() const;  // undefined until a backward reaches it
  void set_grad(const Tensor& g);
  void zero_grad();    // fills .grad with zeros if it exists
  void retain_grad();  // keep .grad on a non-leaf tensor
  const std::shared_ptr<Node>& grad_fn() const;
  // Runs reverse mode from this tensor. A non-scalar needs `grad` (same shape).
  // The graph is freed afterwards unless retain_graph is true.
  void backward(const Tensor& grad = Tensor(), bool retain_graph = false) const;
  Tensor detach() const;         // same data, no history
  Tensor clone() const;          // copied data, no history
  Tensor to(DType dtype) const;  // differentiable cast
  Tensor& set_name(const std::string& name);
  const std::string& name() const;

  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool same(const Tensor& other) const { return impl_ == other.impl_; }

 private:
  TensorImpl& checked() const;
  std::shared_ptr<TensorImpl> impl_;
};

// Named tensors in a fixed order, the way a state_dict lists them: {"h.0.attn.c_attn.weight", W}.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Printing: shape, dtype, and the values rounded for reading, long dimensions elided.
std::ostream& operator<<(std::ostream& os, const Tensor& t);
struct PrintOptions {
  int precision = 4;         // digits after the decimal point
  int64_t edge_items = 3;    // shown at each end of a long dimension
  int64_t threshold = 1000;  // elide when numel exceeds this
};
std::string to_string(const Tensor& t, const PrintOptions& options = {});

// Gradient mode. Inside a NoGradGuard, ops record no graph (like torch.no_grad()).
bool grad_enabled();
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// The opposite, like torch.enable_grad(): ops record again, e.g. inside a backward closure (which
// runs under a NoGradGuard) that recomputes a checkpointed piece of the model.
class EnableGradGuard {
 public:
  EnableGradGuard();
  ~EnableGradGuard();
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool previous_;
};

// Calls f(T{}) with T = float or double according to dtype: kernels are written once as templates.
template <class F>
decltype(auto) dispatch(DType dtype, F&& f) {
  if (dtype == DType::f64) return f(double{});
  return f(float{});
}
template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::f32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::f64;
}

template <class T>
T* Tensor::data() {
  TensorImpl& t = checked();
  if (t.dtype != dtype_of<T>())
    throw ShapeError(std::string("data<") + dtype_name(dtype_of<T>()) + ">: tensor is " + dtype_name(t.dtype));
  return static_cast<T*>(t.storage->data()) + t.offset;
}
template <class T>
const T* Tensor::data() const {
  return const_cast<Tensor*>(this)->data<T>();
}

}  // namespace sf

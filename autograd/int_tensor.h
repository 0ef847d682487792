// int_tensor.h: a small integer tensor for token ids and targets, (B, T) and friends.
// Token ids never need gradients, so they live outside the float Tensor.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sf {

struct IntTensor {
  std::vector<int64_t> shape;  // e.g. (B, T)
  std::vector<int32_t> data;   // row-major, size == product of shape

  IntTensor() = default;
  IntTensor(std::vector<int64_t> shape_, std::vector<int32_t> data_)
      : shape(std::move(shape_)), data(std::move(data_)) {}
  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  int32_t& operator[](int64_t i) { return data[static_cast<size_t>(i)]; }
  int32_t operator[](int64_t i) const { return data[static_cast<size_t>(i)]; }
};

}  // namespace sf

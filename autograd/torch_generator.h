// torch_generator.h: PyTorch's CPU random number generator, draw for draw.
//
// torch.manual_seed(s) seeds one mt19937 (the standard 32-bit Mersenne Twister, seeded with the
// low 32 bits of s); every random op then takes its numbers from it in a fixed way. This class
// makes the same draws as the ops a training script uses, so that a run started here from the
// same seed gets the same initial weights and the same batches as the PyTorch script (see
// init_parameters_like_torch in nn/init.h and TorchWindows in data/lm_batches.h):
//
//   randint(n)        torch.randint(n, ...) for one element: random() % n (random64() % n when
//                     n >= 2^32)
//   uniform_(x, ...)  tensor.uniform_(a, b) on float32: one random() per element, its low 24 bits
//   normal_(x, ...)   tensor.normal_(m, s) on a contiguous float32 tensor: for 16 elements or more,
//                     all uniforms first, then Box-Muller on blocks of 16 (element j and j + 8 of
//                     a block are one pair; a ragged tail redraws the last 16); under 16 elements,
//                     one double Box-Muller draw per element with the second value cached.
//
// PyTorch computes the Box-Muller of large tensors with AVX2 polynomial log/sin/cos; we use the C
// library's, so a value can differ from PyTorch's in its last bit or two (tested to 2e-7).
#pragma once
#include <cstdint>
#include <random>
#include <string>

namespace sf {

class TorchGenerator {
 public:
  explicit TorchGenerator(uint64_t seed = 67280421310721ull);  // PyTorch's default seed
  uint32_t random() { return engine_(); }
  uint64_t random64();
  int64_t randint(int64_t n);  // in [0, n); Error when n <= 0
  void uniform_(float* x, int64_t n, double from, double to);
  void normal_(float* x, int64_t n, double mean, double stddev);

  // The whole state (624 words, position, cached normal) as one string; set_state throws Error
  // on anything that is not such a string.
  std::string state() const;
  void set_state(const std::string& s);

 private:
  float uniform01();          // float32 in [0, 1), 24 bits
  double uniform01_double();  // double in [0, 1), 53 bits
  double scalar_normal();
  std::mt19937 engine_;
  bool has_spare_ = false;
  double spare_ = 0;
};

}  // namespace sf

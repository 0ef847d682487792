// fuzz_safetensors.cpp: the safetensors weights reader, from memory and from a file (the two
// paths read the data differently), then a loaded file written back and read again.
#include <cstring>

#include "fuzz_common.h"
#include "nn/safetensors.h"

static bool same_bits(const sf::Tensor& a, const sf::Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  size_t n = static_cast<size_t>(a.numel()) * sf::dtype_size(a.dtype());
  const void* pa = a.dtype() == sf::DType::f64 ? static_cast<const void*>(a.data<double>()) : a.data<float>();
  const void* pb = b.dtype() == sf::DType::f64 ? static_cast<const void*>(b.data<double>()) : b.data<float>();
  return n == 0 || std::memcmp(pa, pb, n) == 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  sf::NamedTensors from_memory;
  bool ok = false;
  sf::fuzz::guarded([&] {
    sf::Metadata meta;
    from_memory = sf::load_safetensors_from_bytes(bytes, "fuzz.safetensors", &meta);
    ok = true;
    // Whatever loads must save (F16/BF16 widened to F32) and load back bit for bit.
    std::string again = sf::safetensors_bytes(from_memory, meta);
    sf::NamedTensors back = sf::load_safetensors_from_bytes(again, "resaved.safetensors");
    if (back.size() != from_memory.size()) sf::fuzz::bug("resaved file has a different tensor count");
    for (const auto& [name, t] : from_memory) {
      bool found = false;
      for (const auto& [name2, t2] : back)
        if (name2 == name) {
          found = true;
          if (!same_bits(t, t2)) sf::fuzz::bug("tensor '" + name + "' changed on resave");
        }
      if (!found) sf::fuzz::bug("tensor '" + name + "' lost on resave");
    }
  });
  // The file reader must agree with the memory reader: same accept/refuse decision.
  const std::string& path = sf::fuzz::scratch_path("w.safetensors");
  sf::fuzz::write_scratch(path, bytes);
  bool file_ok = false;
  sf::fuzz::guarded([&] {
    sf::NamedTensors t = sf::load_safetensors(path);
    file_ok = true;
    if (t.size() != from_memory.size()) sf::fuzz::bug("file and memory readers disagree on tensor count");
  });
  if (ok != file_ok)
    sf::fuzz::bug(ok ? "memory reader accepts what the file reader refuses"
                     : "file reader accepts what the memory reader refuses");
  return 0;
}

// safetensors.h: reading and writing weights in the safetensors format (Hugging Face).
//
// A safetensors file is three regions, back to back:
//
//   [ N: u64, little-endian ][ N bytes of JSON header ][ raw little-endian tensor data ]
//
// The header maps each tensor name to {"dtype": "F32", "shape": [2, 3], "data_offsets": [b, e]},
// where [b, e) is a byte range of the data region; an optional "__metadata__" entry maps strings
// to strings. The tensors tile the data region exactly: sorted by offset, each begins where the
// previous one ends, and bytes == product(shape) * dtype size. The header is padded with spaces
// to a multiple of 8 bytes, so the data region starts 8-byte aligned.
//
// A weights file may come from anywhere, so reading trusts nothing: every length, offset, shape
// and type is checked before it is used, and any problem is one CheckpointError naming the file
// and the tensor (never a crash, never a huge allocation the file cannot back).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "autograd/tensor.h"

namespace sf {

using Metadata = std::map<std::string, std::string>;

// Largest header we accept (the reference implementation's limit): 100 MB of JSON.
inline constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

// One tensor as the header describes it; [begin, end) is relative to the data region.
struct SafetensorsEntry {
  std::string name;
  std::string dtype;  // "F32", "F64", "BF16", "I64", ...
  Shape shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

// A validated header: entries in data order (by offset), metadata, and where the data starts.
struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries;
  Metadata metadata;
  uint64_t data_start = 0;                                      // 8 + N
  uint64_t data_bytes = 0;                                      // size of the data region
  const SafetensorsEntry* find(const std::string& name) const;  // null when absent
};

// Size in bytes of one element of a safetensors dtype ("F32" -> 4), or 0 if the dtype is unknown.
size_t safetensors_dtype_size(std::string_view dtype);

// Parses and validates a header's JSON (`json`, N bytes) against a data region of `data_bytes`
// bytes. `file` only names the source in error messages.
SafetensorsHeader parse_safetensors_header(std::string_view json, uint64_t data_bytes, const std::string& file);

// Reads and validates just the header of a file (cheap: does not read the data).
SafetensorsHeader read_safetensors_header(const std::string& path);

// Loads every tensor of a file, in data order. F32 -> float32, F64 -> float64, and F16/BF16
// are widened exactly to float32; other dtypes are a CheckpointError naming the tensor.
NamedTensors load_safetensors(const std::string& path, Metadata* metadata = nullptr);

// The same from bytes already in memory (a whole file image): used by tests and fuzzers.
NamedTensors load_safetensors_from_bytes(std::string_view bytes, const std::string& name, Metadata* metadata = nullptr);

// Writes float32 / float64 tensors as F32 / F64 with optional string metadata, atomically:
// a temporary file next to `path` is written, fsync'ed and renamed over `path`, so a crash
// leaves either the old file or the new one, never half of one. Names must be unique.
void save_safetensors(const std::string& path, const NamedTensors& tensors, const Metadata& metadata = {});

// The exact bytes save_safetensors writes (header + data), for tests and in-memory use.
std::string safetensors_bytes(const NamedTensors& tensors, const Metadata& metadata = {});

}  // namespace sf

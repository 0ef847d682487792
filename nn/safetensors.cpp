// safetensors.cpp: the safetensors reader (validate everything, then copy) and the atomic writer.
#include "nn/safetensors.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

namespace sf {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; this reader assumes a little-endian host");

namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& file, const std::string& what) { throw CheckpointError(file + ": " + what); }
[[noreturn]] void fail_tensor(const std::string& file, const std::string& name, const std::string& what) {
  throw CheckpointError(file + ": tensor '" + name + "': " + what);
}

std::string range_str(uint64_t b, uint64_t e) {
  std::string s = "[";  // built with += : GCC 12 warns falsely (-Wrestrict) on "[" + to_string
  s += std::to_string(b);
  s += ", ";
  s += std::to_string(e);
  return s + "]";
}

// Reads a JSON value that must be a non-negative integer (not a float, not a bool).
bool as_u64(const json& v, uint64_t& out) {
  if (!v.is_number_unsigned()) return false;
  out = v.get<uint64_t>();
  return true;
}

}  // namespace

size_t safetensors_dtype_size(std::string_view d) {
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "BOOL" || d == "U8" || d == "I8" || d == "F8_E5M2" || d == "F8_E4M3") return 1;
  return 0;
}

const SafetensorsEntry* SafetensorsHeader::find(const std::string& name) const {
  for (const auto& e : entries)
    if (e.name == name) return &e;
  return nullptr;
}

// ---- reading: the header ----

SafetensorsHeader parse_safetensors_header(std::string_view text, uint64_t data_bytes, const std::string& file) {
  if (text.empty() || text.front() != '{') fail(file, "header does not start with '{' (not a safetensors file?)");

  // Parse with a callback that rejects duplicate top-level names (JSON would silently keep the
  // last one) and nesting deeper than the format ever needs (depth 0 root, 1 entry, 2 field).
  std::set<std::string> seen;
  json root;
  try {
    root = json::parse(text.begin(), text.end(), [&](int depth, json::parse_event_t event, json& parsed) {
      if (depth > 3) fail(file, "header JSON is nested too deeply");
      if (event == json::parse_event_t::key && depth == 1) {
        auto key = parsed.get<std::string>();
        if (!seen.insert(key).second) fail(file, "header names '" + key + "' twice");
      }
      return true;
    });
  } catch (const json::exception& e) { fail(file, std::string("header is not valid JSON (") + e.what() + ")"); }
  if (!root.is_object()) fail(file, "header is not a JSON object");

  SafetensorsHeader header;
  header.data_bytes = data_bytes;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string& name = it.key();
    const json& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) fail(file, "__metadata__ is not an object of strings");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string()) fail(file, "__metadata__ value for '" + m.key() + "' is not a string");
        header.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    if (!v.is_object()) fail_tensor(file, name, "header entry is not an object");
    SafetensorsEntry e;
    e.name = name;

    // dtype
    auto d = v.find("dtype");
    if (d == v.end()) fail_tensor(file, name, "missing field 'dtype'");
    if (!d->is_string()) fail_tensor(file, name, "'dtype' is not a string");
    e.dtype = d->get<std::string>();
    size_t elem = safetensors_dtype_size(e.dtype);
    if (elem == 0) fail_tensor(file, name, "unknown dtype '" + e.dtype + "'");

    // shape: non-negative integers whose product (times the element size) must not overflow
    auto s = v.find("shape");
    if (s == v.end()) fail_tensor(file, name, "missing field 'shape'");
    if (!s->is_array()) fail_tensor(file, name, "'shape' is not an array");
    uint64_t numel = 1;
    for (const json& dim : *s) {
      uint64_t n;
      if (!as_u64(dim, n)) fail_tensor(file, name, "'shape' holds " + dim.dump() + ", not a non-negative integer");
      if (n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) || __builtin_mul_overflow(numel, n, &numel))
        fail_tensor(file, name, "shape " + s->dump() + " overflows 64 bits");
      e.shape.push_back(static_cast<int64_t>(n));
    }
    uint64_t nbytes;
    if (__builtin_mul_overflow(numel, static_cast<uint64_t>(elem), &nbytes))
      fail_tensor(file, name, "shape " + s->dump() + " overflows 64 bits");

    // data_offsets: [begin, end] within the data region, holding exactly nbytes
    auto o = v.find("data_offsets");
    if (o == v.end()) fail_tensor(file, name, "missing field 'data_offsets'");
    if (!o->is_array() || o->size() != 2 || !as_u64((*o)[0], e.begin) || !as_u64((*o)[1], e.end))
      fail_tensor(file, name, "'data_offsets' " + o->dump() + " is not a pair of non-negative integers");
    if (e.end < e.begin)
      fail_tensor(file, name, "data_offsets " + range_str(e.begin, e.end) + " end before they begin");
    if (e.end > data_bytes)
      fail_tensor(file, name,
                  "data_offsets " + range_str(e.begin, e.end) + " go past the end of the data (" +
                      std::to_string(data_bytes) + " bytes; file truncated?)");
    if (e.end - e.begin != nbytes)
      fail_tensor(file, name,
                  "data_offsets " + range_str(e.begin, e.end) + " hold " + std::to_string(e.end - e.begin) +
                      " bytes but " + e.dtype + " shape " + shape_str(e.shape) + " needs " + std::to_string(nbytes));
    header.entries.push_back(std::move(e));
  }

  // The tensors must tile the data region: no overlap, no gap, nothing left over.
  std::sort(header.entries.begin(), header.entries.end(),
            [](const auto& a, const auto& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  uint64_t pos = 0;
  const SafetensorsEntry* prev = nullptr;
  for (const auto& e : header.entries) {
    if (e.begin < pos)
      fail_tensor(file, e.name,
                  "data_offsets " + range_str(e.begin, e.end) + " overlap tensor '" + prev->name + "' " +
                      range_str(prev->begin, prev->end));
    if (e.begin > pos)
      fail_tensor(file, e.name,
                  "data_offsets " + range_str(e.begin, e.end) + " leave a gap of " + std::to_string(e.begin - pos) +
                      " bytes before them");
    pos = e.end;
    prev = &e;
  }
  if (pos != data_bytes)
    fail(file, "tensors cover " + std::to_string(pos) + " bytes but the data region holds " +
                   std::to_string(data_bytes) + " (trailing bytes)");
  return header;
}

namespace {

// Reads the 8-byte length prefix N and checks it against the limit and the file size.
uint64_t header_length(const char* prefix, uint64_t file_size, const std::string& file) {
  if (file_size < 8)
    fail(file, "only " + std::to_string(file_size) + " bytes, too short for a safetensors header length");
  uint64_t n;
  std::memcpy(&n, prefix, 8);
  if (n > kMaxSafetensorsHeader)
    fail(file, "header length " + std::to_string(n) + " is larger than the limit of " +
                   std::to_string(kMaxSafetensorsHeader) + " bytes (corrupt file?)");
  if (n > file_size - 8)
    fail(file, "header length " + std::to_string(n) + " is larger than the file (" + std::to_string(file_size) +
                   " bytes; truncated?)");
  return n;
}

// One element type converted to Tensor storage.
float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf / nan
  } else if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: value = mant * 2^-24, exact in float32
      float v = static_cast<float>(mant) * 0x1.0p-24f;
      return sign ? -v : v;
    }
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

// Copies one validated entry's bytes (`src`, exactly end - begin bytes) into a new Tensor.
Tensor make_tensor(const SafetensorsEntry& e, const char* src, const std::string& file) {
  uint64_t n = e.end - e.begin;
  if (e.dtype == "F32" || e.dtype == "F64") {
    Tensor t = Tensor::empty(e.shape, e.dtype == "F32" ? DType::f32 : DType::f64);
    if (n) std::memcpy(t.storage()->data(), src, n);  // fresh tensor: offset 0
    return t;
  }
  if (e.dtype == "F16" || e.dtype == "BF16") {
    Tensor t = Tensor::empty(e.shape, DType::f32);
    float* out = t.data<float>();
    for (uint64_t i = 0; i < n / 2; ++i) {
      uint16_t h;
      std::memcpy(&h, src + 2 * i, 2);
      out[i] = e.dtype == "F16" ? half_to_float(h) : std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
    }
    return t;
  }
  fail_tensor(file, e.name, "dtype " + e.dtype + " cannot be loaded into a Tensor (F32, F64, F16 and BF16 can)");
}

}  // namespace

SafetensorsHeader read_safetensors_header(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(path, "is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open (") + std::strerror(errno) + ")");
  in.seekg(0, std::ios::end);
  std::streamoff end = in.tellg();
  if (end < 0) fail(path, "cannot determine the file size (not a regular file?)");
  auto size = static_cast<uint64_t>(end);
  in.seekg(0);
  char prefix[8] = {};
  in.read(prefix, static_cast<std::streamsize>(std::min<uint64_t>(8, size)));
  uint64_t n = header_length(prefix, size, path);
  std::string text(n, '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(n)))
    fail(path, "could not read the " + std::to_string(n) + "-byte header");
  SafetensorsHeader h = parse_safetensors_header(text, size - 8 - n, path);
  h.data_start = 8 + n;
  return h;
}

NamedTensors load_safetensors(const std::string& path, Metadata* metadata) {
  SafetensorsHeader h = read_safetensors_header(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open (") + std::strerror(errno) + ")");
  NamedTensors out;
  std::string buf;
  for (const auto& e : h.entries) {
    buf.resize(e.end - e.begin);
    in.seekg(static_cast<std::streamoff>(h.data_start + e.begin));
    if (!in.read(buf.data(), static_cast<std::streamsize>(buf.size())))
      fail_tensor(path, e.name, "could not read its data (file changed while reading?)");
    out.emplace_back(e.name, make_tensor(e, buf.data(), path));
  }
  if (metadata) *metadata = h.metadata;
  return out;
}

NamedTensors load_safetensors_from_bytes(std::string_view bytes, const std::string& name, Metadata* metadata) {
  uint64_t n = header_length(bytes.data(), bytes.size(), name);
  std::string_view text = bytes.substr(8, n);
  uint64_t start = 8 + n;
  SafetensorsHeader h = parse_safetensors_header(text, bytes.size() - start, name);
  NamedTensors out;
  for (const auto& e : h.entries) out.emplace_back(e.name, make_tensor(e, bytes.data() + start + e.begin, name));
  if (metadata) *metadata = h.metadata;
  return out;
}

// ---- writing ----

namespace {

// The header JSON (padded with spaces to a multiple of 8 bytes) and the tensors in data order.
// Like the reference implementation: float64 before float32, then by name; metadata first.
std::pair<std::string, std::vector<const std::pair<std::string, Tensor>*>> prepare(const NamedTensors& tensors,
                                                                                   const Metadata& metadata,
                                                                                   const std::string& file) {
  std::set<std::string> names;
  std::vector<const std::pair<std::string, Tensor>*> order;
  for (const auto& nt : tensors) {
    if (nt.first == "__metadata__") fail(file, "'__metadata__' cannot name a tensor");
    if (!nt.second.defined()) fail_tensor(file, nt.first, "is undefined, nothing to save");
    if (!names.insert(nt.first).second) fail_tensor(file, nt.first, "named twice");
    order.push_back(&nt);
  }
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) {
    size_t sa = dtype_size(a->second.dtype()), sb = dtype_size(b->second.dtype());
    return sa != sb ? sa > sb : a->first < b->first;
  });
  nlohmann::ordered_json h = nlohmann::ordered_json::object();
  if (!metadata.empty()) h["__metadata__"] = metadata;
  uint64_t pos = 0;
  for (auto* nt : order) {
    const Tensor& t = nt->second;
    uint64_t n = static_cast<uint64_t>(t.numel()) * dtype_size(t.dtype());
    h[nt->first] = {
        {"dtype", t.dtype() == DType::f64 ? "F64" : "F32"}, {"shape", t.shape()}, {"data_offsets", {pos, pos + n}}};
    pos += n;
  }
  std::string text = h.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  return {std::move(text), std::move(order)};
}

// Writes all of buf to fd, retrying short writes; false on error (errno set).
bool write_all(int fd, const char* buf, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, buf, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    buf += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

std::string safetensors_bytes(const NamedTensors& tensors, const Metadata& metadata) {
  auto [text, order] = prepare(tensors, metadata, "<memory>");
  std::string out(8, '\0');
  uint64_t n = text.size();
  std::memcpy(out.data(), &n, 8);
  out += text;
  for (auto* nt : order) {
    const Tensor& t = nt->second;
    const char* p = t.dtype() == DType::f64 ? reinterpret_cast<const char*>(t.data<double>())
                                            : reinterpret_cast<const char*>(t.data<float>());
    out.append(p, static_cast<size_t>(t.numel()) * dtype_size(t.dtype()));
  }
  return out;
}

void save_safetensors(const std::string& path, const NamedTensors& tensors, const Metadata& metadata) {
  auto [text, order] = prepare(tensors, metadata, path);
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, "cannot create " + tmp + " (" + std::strerror(errno) + ")");
  auto abort_write = [&](const std::string& what) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(path, what + " (" + std::strerror(err) + ")");
  };
  uint64_t n = text.size();
  char len[8];
  std::memcpy(len, &n, 8);
  if (!write_all(fd, len, 8) || !write_all(fd, text.data(), text.size())) abort_write("cannot write the header");
  for (auto* nt : order) {
    const Tensor& t = nt->second;
    const char* p = t.dtype() == DType::f64 ? reinterpret_cast<const char*>(t.data<double>())
                                            : reinterpret_cast<const char*>(t.data<float>());
    if (!write_all(fd, p, static_cast<size_t>(t.numel()) * dtype_size(t.dtype())))
      abort_write("cannot write tensor '" + nt->first + "'");
  }
  if (::fsync(fd) != 0) abort_write("cannot fsync");
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail(path, std::string("cannot close (") + std::strerror(err) + ")");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail(path, "cannot rename " + tmp + " into place (" + std::strerror(err) + ")");
  }
  // Make the rename itself durable: fsync the directory that holds the file.
  std::string dir = std::filesystem::path(path).parent_path().string();
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace sf

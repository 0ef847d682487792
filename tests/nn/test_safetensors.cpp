// Safetensors: exact bytes of the format, round trips, and one test per malformed-file error.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "nn/safetensors.h"

using namespace sf;
namespace fs = std::filesystem;

namespace {

// A file image from a header text and a data region (the header is used as is, unpadded).
std::string image(const std::string& header, const std::string& data = "") {
  std::string out(8, '\0');
  uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

// The CheckpointError message that loading this image produces ("" if it loads).
std::string load_error(const std::string& bytes) {
  try {
    load_safetensors_from_bytes(bytes, "bad.safetensors");
  } catch (const CheckpointError& e) { return e.what(); }
  return "";
}

fs::path temp_dir() {
  fs::path d = fs::temp_directory_path() / ("sf_test_safetensors_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

void write_bytes(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

const std::string kData24(24, '\0');  // room for six float32 values

}  // namespace

TEST_CASE("safetensors: bytes follow the format exactly") {
  Tensor a = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::from_vector({-1.5}, {1}, DType::f64);
  std::string bytes = safetensors_bytes({{"a", a}, {"b", b}}, {{"format", "pt"}});
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  CHECK(n % 8 == 0);  // padded so the data starts 8-byte aligned
  std::string header = bytes.substr(8, n);
  // metadata first, then float64 before float32 (the reference ordering), compact JSON, spaces
  std::string expected = R"({"__metadata__":{"format":"pt"},"b":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},)"
                         R"("a":{"dtype":"F32","shape":[2,3],"data_offsets":[8,32]}})";
  CHECK(header.substr(0, expected.size()) == expected);
  CHECK(header.find_first_not_of(' ', expected.size()) == std::string::npos);
  REQUIRE(bytes.size() == 8 + n + 32);
  double b0;
  float a5;
  std::memcpy(&b0, bytes.data() + 8 + n, 8);
  std::memcpy(&a5, bytes.data() + 8 + n + 8 + 20, 4);
  CHECK(b0 == -1.5);
  CHECK(a5 == 6.0f);
}

TEST_CASE("safetensors: round trip through a file keeps names, shapes, dtypes, values, metadata") {
  fs::path dir = temp_dir();
  std::string path = (dir / "weights.safetensors").string();
  Generator gen(7);
  NamedTensors in = {{"layer.weight", Tensor::randn({3, 5}, gen)},
                     {"layer.bias", Tensor::randn({5}, gen, 1.0, DType::f64)},
                     {"scalar", Tensor::scalar(3.25)},
                     {"empty", Tensor::zeros({0, 4})}};
  save_safetensors(path, in, {{"step", "12"}, {"note", "hello"}});
  Metadata meta;
  NamedTensors out = load_safetensors(path, &meta);
  CHECK(meta == Metadata{{"step", "12"}, {"note", "hello"}});
  REQUIRE(out.size() == in.size());
  for (const auto& [name, t] : in) {
    auto it = std::find_if(out.begin(), out.end(), [&](auto& p) { return p.first == name; });
    REQUIRE(it != out.end());
    CHECK(it->second.shape() == t.shape());
    CHECK(it->second.dtype() == t.dtype());
    CHECK(it->second.to_vector() == t.to_vector());  // bit-exact
  }
  // nothing but the file itself is left behind (the temporary was renamed)
  int files = 0;
  for (auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  CHECK(files == 1);
  // saving again replaces the file atomically
  save_safetensors(path, {{"x", Tensor::ones({2})}});
  CHECK(load_safetensors(path).size() == 1);
  fs::remove_all(dir);
}

TEST_CASE("safetensors: header-only read does not need the tensors, and lists them by offset") {
  fs::path dir = temp_dir();
  std::string path = (dir / "h.safetensors").string();
  save_safetensors(path, {{"z", Tensor::zeros({4})}, {"a", Tensor::zeros({2, 2})}});
  SafetensorsHeader h = read_safetensors_header(path);
  REQUIRE(h.entries.size() == 2);
  CHECK(h.entries[0].name == "a");
  CHECK(h.entries[1].begin == 16);
  CHECK(h.find("z") != nullptr);
  CHECK(h.find("y") == nullptr);
  CHECK(h.data_start % 8 == 0);
  fs::remove_all(dir);
}

TEST_CASE("safetensors: F16 and BF16 are widened exactly to float32") {
  // F16: 1.0 = 0x3c00, -2.0 = 0xc000, 2^-24 (smallest subnormal) = 0x0001, inf = 0x7c00
  // BF16: 1.0 = 0x3f80, -3.0 = 0xc040
  std::string data;
  for (uint16_t h : {0x3c00, 0xc000, 0x0001, 0x7c00, 0x3f80, 0xc040}) data.append(reinterpret_cast<const char*>(&h), 2);
  std::string header = R"({"h":{"dtype":"F16","shape":[4],"data_offsets":[0,8]},)"
                       R"("b":{"dtype":"BF16","shape":[2],"data_offsets":[8,12]}})";
  NamedTensors t = load_safetensors_from_bytes(image(header, data), "half");
  REQUIRE(t.size() == 2);
  CHECK(t[0].second.dtype() == DType::f32);
  CHECK(t[0].second.to_vector() == std::vector<double>{1.0, -2.0, 0x1.0p-24, INFINITY});
  CHECK(t[1].second.to_vector() == std::vector<double>{1.0, -3.0});
}

TEST_CASE("safetensors: writing rejects duplicate names, undefined tensors and bad paths") {
  CHECK_THROWS_WITH_AS(safetensors_bytes({{"w", Tensor::ones({1})}, {"w", Tensor::ones({1})}}),
                       doctest::Contains("tensor 'w': named twice"), CheckpointError);
  CHECK_THROWS_WITH_AS(safetensors_bytes({{"w", Tensor()}}), doctest::Contains("'w'"), CheckpointError);
  CHECK_THROWS_WITH_AS(safetensors_bytes({{"__metadata__", Tensor::ones({1})}}), doctest::Contains("__metadata__"),
                       CheckpointError);
  CHECK_THROWS_WITH_AS(save_safetensors("/nonexistent_dir_sf/x.safetensors", {{"w", Tensor::ones({1})}}),
                       doctest::Contains("/nonexistent_dir_sf/x.safetensors"), CheckpointError);
}

// ---- malformed files: each is one CheckpointError naming the file and, where one is at fault,
// the tensor ----

TEST_CASE("safetensors malformed: missing file, directory, or shorter than the length prefix") {
  CHECK_THROWS_WITH_AS(load_safetensors("/nonexistent_sf.safetensors"),
                       doctest::Contains("/nonexistent_sf.safetensors: cannot open"), CheckpointError);
  CHECK_THROWS_WITH_AS(load_safetensors(fs::temp_directory_path().string()), doctest::Contains("directory"),
                       CheckpointError);
  CHECK(load_error("abc").find("bad.safetensors: only 3 bytes") == 0);
  CHECK(load_error("").find("only 0 bytes") != std::string::npos);
}

TEST_CASE("safetensors malformed: header length larger than the file or absurdly large") {
  std::string bytes = image(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", "1234");
  uint64_t n = 1000;
  std::memcpy(bytes.data(), &n, 8);
  CHECK(load_error(bytes).find("header length 1000 is larger than the file") != std::string::npos);
  n = ~uint64_t{0};
  std::memcpy(bytes.data(), &n, 8);
  CHECK(load_error(bytes).find("larger than the limit") != std::string::npos);
  // the same through the file reader, where the length is checked before any allocation
  fs::path dir = temp_dir();
  write_bytes(dir / "huge.safetensors", bytes);
  CHECK_THROWS_WITH_AS(load_safetensors((dir / "huge.safetensors").string()),
                       doctest::Contains("huge.safetensors: header length"), CheckpointError);
  fs::remove_all(dir);
}

TEST_CASE("safetensors malformed: header that is not a JSON object") {
  CHECK(load_error(image("[1, 2]")).find("does not start with '{'") != std::string::npos);
  CHECK(load_error(image("{\"a\": ")).find("not valid JSON") != std::string::npos);
  CHECK(load_error(image("{\"a\": \"\xff\xfe\"}")).find("not valid JSON") != std::string::npos);
  CHECK(load_error(image("{} {}")).find("not valid JSON") != std::string::npos);
  CHECK(load_error(image(R"({"a":{"dtype":{"x":{"y":[[1]]}}}})")).find("nested too deeply") != std::string::npos);
  // a deep bomb is rejected early, without recursion trouble
  CHECK(load_error(image("{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}"))
            .find("nested too deeply") != std::string::npos);
}

TEST_CASE("safetensors malformed: a tensor named twice") {
  std::string h = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                  R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  CHECK(load_error(image(h, "12345678")).find("names 'a' twice") != std::string::npos);
}

TEST_CASE("safetensors malformed: missing fields") {
  CHECK(load_error(image(R"({"w":{"shape":[6],"data_offsets":[0,24]}})", kData24)) ==
        "bad.safetensors: tensor 'w': missing field 'dtype'");
  CHECK(load_error(image(R"({"w":{"dtype":"F32","data_offsets":[0,24]}})", kData24)) ==
        "bad.safetensors: tensor 'w': missing field 'shape'");
  CHECK(load_error(image(R"({"w":{"dtype":"F32","shape":[6]}})", kData24)) ==
        "bad.safetensors: tensor 'w': missing field 'data_offsets'");
}

TEST_CASE("safetensors malformed: fields of the wrong type") {
  auto err = [](const std::string& entry) { return load_error(image("{\"w\":" + entry + "}", kData24)); };
  CHECK(err("[1]").find("tensor 'w': header entry is not an object") != std::string::npos);
  CHECK(err(R"({"dtype":4,"shape":[6],"data_offsets":[0,24]})").find("'dtype' is not a string") != std::string::npos);
  CHECK(err(R"({"dtype":"F32","shape":6,"data_offsets":[0,24]})").find("'shape' is not an array") != std::string::npos);
  CHECK(err(R"({"dtype":"F32","shape":[-6],"data_offsets":[0,24]})").find("not a non-negative") != std::string::npos);
  CHECK(err(R"({"dtype":"F32","shape":[6.0],"data_offsets":[0,24]})").find("not a non-negative") != std::string::npos);
  CHECK(err(R"({"dtype":"F32","shape":[true],"data_offsets":[0,24]})").find("not a non-negative") != std::string::npos);
  CHECK(err(R"({"dtype":"F32","shape":[6],"data_offsets":[0,24,48]})").find("'data_offsets'") != std::string::npos);
  CHECK(err(R"({"dtype":"F32","shape":[6],"data_offsets":"0-24"})").find("'data_offsets'") != std::string::npos);
  CHECK(err(R"({"dtype":"F32","shape":[6],"data_offsets":[-1,23]})").find("'data_offsets'") != std::string::npos);
  CHECK(load_error(image(R"({"__metadata__":{"k":1}})")).find("__metadata__ value for 'k'") != std::string::npos);
  CHECK(load_error(image(R"({"__metadata__":[]})")).find("__metadata__ is not an object") != std::string::npos);
}

TEST_CASE("safetensors malformed: unknown dtype, and a known dtype a Tensor cannot hold") {
  CHECK(load_error(image(R"({"w":{"dtype":"F31","shape":[6],"data_offsets":[0,24]}})", kData24)) ==
        "bad.safetensors: tensor 'w': unknown dtype 'F31'");
  std::string e = load_error(image(R"({"ids":{"dtype":"I64","shape":[3],"data_offsets":[0,24]}})", kData24));
  CHECK(e.find("tensor 'ids': dtype I64 cannot be loaded") != std::string::npos);
}

TEST_CASE("safetensors malformed: offsets past the end of the data (a truncated file)") {
  CHECK(load_error(image(R"({"w":{"dtype":"F32","shape":[6],"data_offsets":[0,24]}})", "short"))
            .find("tensor 'w': data_offsets [0, 24] go past the end of the data (5 bytes") != std::string::npos);
  CHECK(load_error(image(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})", kData24))
            .find("end before they begin") != std::string::npos);
  // a real file cut short
  fs::path dir = temp_dir();
  std::string path = (dir / "cut.safetensors").string();
  save_safetensors(path, {{"a", Tensor::ones({8})}, {"b", Tensor::ones({8})}});
  fs::resize_file(path, fs::file_size(path) - 3);
  CHECK_THROWS_WITH_AS(load_safetensors(path), doctest::Contains("cut.safetensors: tensor 'b'"), CheckpointError);
  fs::remove_all(dir);
}

TEST_CASE("safetensors malformed: byte length that does not match the shape") {
  CHECK(load_error(image(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,24]}})", kData24)) ==
        "bad.safetensors: tensor 'w': data_offsets [0, 24] hold 24 bytes but F32 shape (2, 2) "
        "needs 16");
}

TEST_CASE("safetensors malformed: shape whose product overflows") {
  std::string e = load_error(image(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,0],"data_offsets":[0,0]}})"));
  CHECK(e.find("tensor 'w': shape [4294967296,4294967296,0] overflows") != std::string::npos);
  e = load_error(image(R"({"w":{"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,0]}})"));
  CHECK(e.find("overflows") != std::string::npos);  // product fits, times 8 bytes does not
  e = load_error(image(R"({"w":{"dtype":"U8","shape":[18446744073709551615,0],"data_offsets":[0,0]}})"));
  CHECK(e.find("overflows") != std::string::npos);  // a dimension larger than int64
}

TEST_CASE("safetensors malformed: overlapping, gapped, or not covering the data") {
  std::string overlap = R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                        R"("b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})";
  CHECK(load_error(image(overlap, kData24)) ==
        "bad.safetensors: tensor 'b': data_offsets [8, 24] overlap tensor 'a' [0, 16]");
  std::string gap = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                    R"("b":{"dtype":"F32","shape":[2],"data_offsets":[16,24]}})";
  CHECK(load_error(image(gap, kData24)) ==
        "bad.safetensors: tensor 'b': data_offsets [16, 24] leave a gap of 8 bytes before them");
  std::string late = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})";
  CHECK(load_error(image(late, std::string(16, '\0'))).find("gap of 8 bytes") != std::string::npos);
  std::string trailing = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  CHECK(load_error(image(trailing, kData24)).find("cover 8 bytes but the data region holds 24") != std::string::npos);
  // zero-size tensors may share an offset with their neighbours
  std::string zeros = R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},)"
                      R"("b":{"dtype":"F32","shape":[6],"data_offsets":[0,24]}})";
  CHECK(load_error(image(zeros, kData24)) == "");
}

TEST_CASE("safetensors: a file from the Python writer loads, and our writer reproduces its bytes") {
  // tests/reference/nn/python_written.safetensors comes from tools/safetensors_io.py (used by the
  // nanoGPT converter), written by tests/reference/gen_nn_ref.py.
  std::string path = std::string(SF_SOURCE_DIR) + "/tests/reference/nn/python_written.safetensors";
  Metadata meta;
  NamedTensors t = load_safetensors(path, &meta);
  REQUIRE(t.size() == 3);
  CHECK(meta.at("format") == "pt");
  CHECK(t[0].first == "b");  // float64 first, as the reference ordering puts it
  CHECK(t[0].second.to_vector() == std::vector<double>{-1.5, 2.25});
  CHECK(t[1].first == "a");
  CHECK(t[1].second.shape() == Shape{2, 3});
  CHECK(t[1].second.at({1, 2}) == static_cast<double>(5.0f / 7.0f));
  CHECK(t[2].second.shape() == Shape{0, 3});
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(safetensors_bytes(t, meta) == bytes);
}

TEST_CASE("safetensors: random corruptions of a valid file load or fail with CheckpointError only") {
  // A small deterministic fuzz: flip bytes, cut the file, splice in digits and brackets. Every
  // outcome must be a clean load or one CheckpointError (never another exception, never a crash;
  // the sanitizer build checks the memory side).
  Generator gen(2024);
  std::string valid = safetensors_bytes(
      {{"w", Tensor::randn({3, 4}, gen)}, {"b", Tensor::randn({4}, gen, 1.0, DType::f64)}}, {{"k", "v"}});
  const std::string alphabet = "0123456789[]{}\",:- eEFI";
  int loaded = 0, rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bytes = valid;
    int edits = 1 + static_cast<int>(gen.randint(4));
    for (int e = 0; e < edits; ++e) {
      size_t pos = static_cast<size_t>(gen.randint(static_cast<int64_t>(bytes.size())));
      switch (gen.randint(4)) {
        case 0: bytes[pos] = static_cast<char>(gen.randint(256)); break;
        case 1: bytes[pos] = alphabet[static_cast<size_t>(gen.randint(static_cast<int64_t>(alphabet.size())))]; break;
        case 2: bytes.resize(pos); break;
        default:
          bytes.insert(pos, 1, alphabet[static_cast<size_t>(gen.randint(static_cast<int64_t>(alphabet.size())))]);
      }
      if (bytes.empty()) break;
    }
    try {
      load_safetensors_from_bytes(bytes, "fuzz");
      ++loaded;
    } catch (const CheckpointError&) { ++rejected; } catch (const std::exception& e) {
      FAIL("trial " << trial << ": unexpected exception " << e.what());
    }
  }
  CHECK(rejected > 2000);  // nearly every corruption is caught
  CHECK(loaded + rejected == 3000);
}

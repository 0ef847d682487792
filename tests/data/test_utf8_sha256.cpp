// UTF-8 decoding rules, SHA-256 against FIPS 180-4 test vectors, atomic writes and text checks.
#include <doctest/doctest.h>

#include "autograd/errors.h"
#include "data/file_io.h"
#include "data/sha256.h"
#include "data/utf8.h"
#include "test_helpers.h"

using namespace sf;
using namespace sf::data;
using sf::test::contains;
using sf::test::error_of;

TEST_CASE("utf8: decodes code points of every length and encodes them back") {
  std::string s = "a\xC3\xA9\xE6\x88\x91\xF0\x9F\x98\x80";  // a é 我 😀
  auto cps = utf8_decode(s);
  REQUIRE(cps.size() == 4);
  CHECK(cps[0] == U'a');
  CHECK(cps[1] == 0xE9);
  CHECK(cps[2] == 0x6211);
  CHECK(cps[3] == 0x1F600);
  CHECK(utf8_encode(cps) == s);
  CHECK(utf8_decode("我喜欢苹果").size() == 5);
}

TEST_CASE("utf8: malformed input names the byte offset") {
  CHECK(utf8_first_error("ok") == -1);
  CHECK(utf8_first_error("ab\xFF") == 2);            // invalid lead byte
  CHECK(utf8_first_error("abc\xC3") == 3);           // truncated
  CHECK(utf8_first_error("\xC0\xAF") == 0);          // overlong '/'
  CHECK(utf8_first_error("x\xED\xA0\x80") == 1);     // surrogate U+D800
  CHECK(utf8_first_error("\xF4\x90\x80\x80") == 0);  // above U+10FFFF
  CHECK(utf8_first_error("\x80") == 0);              // lone continuation byte
  std::string msg = error_of<DataError>([] { utf8_decode("hello \xFFworld", "notes.txt"); });
  CHECK(msg == "notes.txt: invalid UTF-8 at byte offset 6 (byte 0xFF); is this a text file?");
}

TEST_CASE("utf8: a stream holds back a character split across pieces and never emits invalid UTF-8") {
  const std::string text = "我喜欢苹果 ok";  // 3 bytes per Chinese character
  // Every way of cutting the text in two gives back the text, each piece valid on its own.
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    CAPTURE(cut);
    sf::data::Utf8Stream s;
    std::string a = s.push(std::string_view(text).substr(0, cut));
    std::string b = s.push(std::string_view(text).substr(cut));
    bool tail = true;
    std::string c = s.finish(&tail);
    CHECK(sf::data::utf8_first_error(a) < 0);
    CHECK(sf::data::utf8_first_error(b) < 0);
    CHECK(a + b + c == text);
    CHECK_FALSE(tail);
  }
  // Byte by byte: nothing of a character comes out before its last byte.
  sf::data::Utf8Stream s;
  CHECK(s.push("\xE6") == "");
  CHECK(s.push("\x88") == "");
  CHECK(s.push("\x91") == "我");
  // A stray continuation byte, or a lead byte followed by no continuation: U+FFFD, and on.
  CHECK(s.push("\x91"
               "a") ==
        "\xEF\xBF\xBD"
        "a");  // (two literals: \x91a would be one escape)
  CHECK(s.push("\xE6"
               "b") ==
        "\xEF\xBF\xBD"
        "b");
  // An incomplete tail at the end is said, and shown as one U+FFFD.
  CHECK(s.push("\xE6\x88") == "");
  bool tail = false;
  CHECK(s.finish(&tail) == "\xEF\xBF\xBD");
  CHECK(tail);
}

TEST_CASE("sha256: FIPS 180-4 and NIST test vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
                   "klmnopqrlmnopqrsmnopqrstnopqrstu") ==
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  // One million 'a', fed in uneven pieces to exercise the buffering.
  Sha256 h;
  std::string piece(997, 'a');
  size_t left = 1000000;
  while (left > 0) {
    size_t n = std::min(left, piece.size());
    h.update(piece.data(), n);
    left -= n;
  }
  auto d = h.digest();
  CHECK(to_hex(d.data(), d.size()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // 55, 56 and 64 bytes: the padding boundary cases (checked against sha256sum).
  CHECK(sha256_hex(std::string(55, 'a')) == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  CHECK(sha256_hex(std::string(56, 'a')) == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  CHECK(sha256_hex(std::string(64, 'a')) == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST_CASE("file_io: atomic write replaces the file and leaves no temp file") {
  sf::test::TempDir dir("atomic");
  auto p = dir / "out.json";
  write_file_atomic(p, "first");
  write_file_atomic(p, "second");
  CHECK(read_file_bytes(p) == "second");
  CHECK(sf::test::count_files(dir.path) == 1);
  // A folder that does not exist: a clear error, nothing created.
  std::string msg = error_of<DataError>([&] { write_file_atomic(dir / "nope/out.json", "x"); });
  CHECK(contains(msg, "nope/out.json: cannot create temporary file"));
}

TEST_CASE("file_io: missing, empty, binary and non-UTF-8 text files are clear errors") {
  sf::test::TempDir dir("textfiles");
  CHECK(error_of<DataError>([&] { read_text_file(dir / "missing.txt"); }) ==
        (dir / "missing.txt").string() + ": no such file");
  sf::test::write_bytes(dir / "empty.txt", "");
  CHECK(error_of<DataError>([&] { read_text_file(dir / "empty.txt"); }) ==
        (dir / "empty.txt").string() + ": file is empty");
  sf::test::write_bytes(dir / "bin.dat", std::string("PK\x03\x04\0\0abc", 9));
  CHECK(error_of<DataError>([&] { read_text_file(dir / "bin.dat"); }) ==
        (dir / "bin.dat").string() + ": looks binary (NUL byte at offset 4), expected a UTF-8 text file");
  sf::test::write_bytes(dir / "latin1.txt", "caf\xE9 au lait");
  CHECK(error_of<DataError>([&] { read_text_file(dir / "latin1.txt"); }) ==
        (dir / "latin1.txt").string() + ": invalid UTF-8 at byte offset 3 (byte 0xE9); is this a text file?");
  CHECK(error_of<DataError>([&] { read_text_file(dir.path); }) ==
        dir.path.string() + ": is a directory, expected a file");
}

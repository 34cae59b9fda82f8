// Paths in JSON (binary/path_bytes.hpp) and the UTF-8 rule behind them
// (util/utf8.hpp).
#include "binary/path_bytes.hpp"

#include <gtest/gtest.h>

#include "util/utf8.hpp"

using archfit::binary::put_path;
using archfit::util::is_valid_utf8;
using archfit::util::utf8_sequence_length;

TEST(Utf8, WellFormedSequencesAndTheFormsRfc3629Forbids) {
  EXPECT_TRUE(is_valid_utf8("libtorch_cuda.so"));
  EXPECT_TRUE(is_valid_utf8("caf\xc3\xa9/\xe2\x82\xac/\xf0\x9f\x98\x80"));  // é € 😀
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_FALSE(is_valid_utf8("\xff"));
  EXPECT_FALSE(is_valid_utf8("\x80"));              // a continuation byte alone
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xe0\x80\xaf"));      // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(is_valid_utf8("caf\xc3"));           // cut off
  EXPECT_EQ(utf8_sequence_length("\xe2\x82\xac!"), 3u);
  EXPECT_EQ(utf8_sequence_length("\x1b"),
            1u);  // control bytes are UTF-8; a terminal is another matter
}

TEST(PathBytes, OnlyAPathThatIsNotUtf8CarriesItsBytesInBase64) {
  nlohmann::json plain = nlohmann::json::object();
  put_path(plain, "/venv/lib/caf\xc3\xa9.so");
  EXPECT_EQ(plain["path"], "/venv/lib/caf\xc3\xa9.so");
  EXPECT_FALSE(plain.contains("path_bytes"));

  // RFC 4648's test vectors, each made not UTF-8 by a trailing 0xff.
  const std::pair<std::string, std::string> vectors[] = {
      {"\xff", "/w=="},        {"f\xff", "Zv8="},        {"fo\xff", "Zm//"},
      {"foo\xff", "Zm9v/w=="}, {"foob\xff", "Zm9vYv8="}, {"fooba\xff", "Zm9vYmH/"}};
  for (const auto& [bytes, base64] : vectors) {
    nlohmann::json odd = nlohmann::json::object();
    put_path(odd, bytes);
    EXPECT_EQ(odd["path_bytes"], base64) << base64;
  }
}

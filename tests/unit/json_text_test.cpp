// JSON as archfit prints it (util/json_text.hpp): bytes that are not UTF-8
// replaced, DEL and the C1 controls escaped, all else as nlohmann writes it.
#include "util/json_text.hpp"

#include <gtest/gtest.h>

namespace {

TEST(JsonText, EscapesDelAndC1ControlsAndReplacesWhatIsNotUtf8) {
  const nlohmann::json name = std::string(
      "a\x7f"
      "b\xc2\x85"
      "c\xc2\x9f"
      "d\xff"
      "e\x1b");
  // U+FFFD for the stray byte, written as UTF-8.
  EXPECT_EQ(archfit::util::json_text(name),
            "\"a\\u007fb\\u0085c\\u009fd\xef\xbf\xbd"
            "e\\u001b\"");
  // Printable Unicode stays as it is, U+00A0 (C2 A0) included.
  const nlohmann::json text = std::string("\xe2\x9c\x97 fails\xc2\xa0here");
  EXPECT_EQ(archfit::util::json_text(text), "\"\xe2\x9c\x97 fails\xc2\xa0here\"");
  // What it writes reads back as what was given, once valid.
  const nlohmann::json document = {{"name", std::string("x\x7fy\xc2\x85z")}, {"n", 1}};
  EXPECT_EQ(nlohmann::json::parse(archfit::util::json_text(document, 2)), document);
}

}  // namespace

// What the CLI writes to stdout is safe to show on a terminal
// (cli/terminal_safe_output.hpp): names read from files cannot drive it.
#include "terminal_safe_output.hpp"

#include <gtest/gtest.h>

#include <sstream>

using archfit::cli::escape_for_terminal;
using archfit::cli::TerminalSafeStream;

TEST(TerminalSafeOutput, ControlBytesAndBytesThatAreNotUtf8AreShownAsHex) {
  // Clear the screen, set the title (OSC ... BEL), a carriage return that
  // would overwrite the line, DEL, and a byte that is not UTF-8.
  EXPECT_EQ(escape_for_terminal("lib\x1b[2J\x1b]0;pwned\x07\r\x7f\xff.so\n", false),
            "lib\\x1b[2J\\x1b]0;pwned\\x07\\x0d\\x7f\\xff.so\n");
  // U+009B is CSI to some terminals: the C1 controls are escaped too.
  EXPECT_EQ(escape_for_terminal("a\xc2\x9b"
                                "2Jb",
                                false),
            "a\\xc2\\x9b2Jb");
  // A CRLF line end (a .bat plan for a Windows environment) passes; a CR
  // anywhere else is escaped.
  EXPECT_EQ(escape_for_terminal("@echo off\r\nrem\r\r\n\rx", false),
            "@echo off\r\nrem\\x0d\r\n\\x0dx");
  // What is plain text stays as it is: tabs, newlines, UTF-8.
  EXPECT_EQ(escape_for_terminal("caf\xc3\xa9\t\xe2\x82\xac\n", false),
            "caf\xc3\xa9\t\xe2\x82\xac\n");
}

TEST(TerminalSafeOutput, OnlyColourSequencesPassAndOnlyWhenColourIsOn) {
  EXPECT_EQ(escape_for_terminal("\x1b[1mbold\x1b[0m \x1b[31;1mred\x1b[0m", true),
            "\x1b[1mbold\x1b[0m \x1b[31;1mred\x1b[0m");
  EXPECT_EQ(escape_for_terminal("\x1b[1mbold\x1b[0m", false), "\\x1b[1mbold\\x1b[0m");
  // Cursor movement, erase and OSC are not colours.
  EXPECT_EQ(escape_for_terminal("\x1b[2J\x1b[10A\x1b]52;c;aGk=\x07", true),
            "\\x1b[2J\\x1b[10A\\x1b]52;c;aGk=\\x07");
}

TEST(TerminalSafeOutput, AStreamIsEscapedLineByLineAndRestoredAfterwards) {
  std::ostringstream out;
  {
    const TerminalSafeStream safe(out, false);
    // A two-byte character written in two pieces is not cut in half.
    out << "caf\xc3"
        << "\xa9 ";
    out << "evil\x1b[2J" << '\n' << "no newline at the end\x07";
  }
  EXPECT_EQ(out.str(), "caf\xc3\xa9 evil\\x1b[2J\nno newline at the end\\x07");
  out << "\x1b";  // restored: written as it is
  EXPECT_EQ(out.str().back(), '\x1b');
}

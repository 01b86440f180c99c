// diagnostics: source lines by number whatever the line ends, and a caret that
// stands under its column whatever characters come before it.
#include "base/diagnostics.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace tilec {
namespace {

SourceFilePtr file_of(const std::string& text) {
  auto file = std::make_shared<SourceFile>();
  file->name = "k.py";
  file->text = text;
  return file;
}

std::string diagnostic(const std::string& text, int line, int col, const std::string& message) {
  return format_diagnostic(SourceLoc{file_of(text), line, col}, "error", message);
}

TEST(Diagnostics, LinesEndAsPythonEndsThem) {
  for (const char* text : {"a\nbb\n\nccc\n", "a\r\nbb\r\n\r\nccc\r\n", "a\rbb\r\rccc\r", "a\nbb\r\n\rccc"}) {
    auto file = file_of(text);
    EXPECT_EQ(file->line_text(1), "a") << text;
    EXPECT_EQ(file->line_text(2), "bb") << text;
    EXPECT_EQ(file->line_text(3), "") << text;
    EXPECT_EQ(file->line_text(4), "ccc") << text;
    EXPECT_EQ(file->line_text(5), "") << text;
  }
}

TEST(Diagnostics, EveryLineOfALongFileIsFoundInAnyOrder) {
  std::string text;
  for (int i = 1; i <= 20000; ++i) text += "line" + std::to_string(i) + (i % 3 ? "\n" : "\r\n");
  auto file = file_of(text);
  for (int i : {20000, 1, 777, 19999, 2, 20000}) EXPECT_EQ(file->line_text(i), "line" + std::to_string(i));
  EXPECT_EQ(file->line_text(20001), "");
  EXPECT_EQ(file->line_text(0), "");
  EXPECT_EQ(file_of("")->line_text(1), "");
}

TEST(Diagnostics, TheCaretStandsUnderItsColumn) {
  EXPECT_EQ(diagnostic("x = y + z\n", 1, 9, "m"), "k.py:1:9: error: m\n    x = y + z\n            ^");
  // Tabs stay tabs above and below.
  EXPECT_EQ(diagnostic("\tx =\ty\n", 1, 6, "m"), "k.py:1:6: error: m\n    \tx =\ty\n    \t   \t^");
  // A multi-byte character is one column: 'é' is two bytes.
  EXPECT_EQ(diagnostic("s = 'é' + q\n", 1, 12, "m"), "k.py:1:12: error: m\n    s = 'é' + q\n              ^");
  // On a line that ends in CR LF or CR, and past the line's end.
  EXPECT_EQ(diagnostic("a\r\nb = c\r\n", 2, 5, "m"), "k.py:2:5: error: m\n    b = c\n        ^");
  EXPECT_EQ(diagnostic("a\rb = c\r", 2, 6, "m"), "k.py:2:6: error: m\n    b = c\n         ^");
}

TEST(Diagnostics, ControlCharactersAreWrittenEscaped) {
  // A NUL in the line or the message ended the text for a C-string reader
  // before the caret (std::cerr << what(), a Python exception's message).
  std::string line("a\0b = \x1b[2J c\n", 13);
  std::string text = diagnostic(line, 1, 12, std::string("no \0 here", 9));
  EXPECT_EQ(text, "k.py:1:12: error: no \\x00 here\n    a\\x00b = \\x1b[2J c\n                     ^");
  EXPECT_EQ(text.find('\0'), std::string::npos);
  // Newlines and tabs of a message stay.
  EXPECT_EQ(format_diagnostic(SourceLoc{}, "error", "a\n\tb\x07"), "error: a\n\tb\\x07");
}

}  // namespace
}  // namespace tilec

#include "base/diagnostics.h"

#include <cstdio>

namespace tilec {
namespace {

// The length of the line break at text[pos] ("\n", "\r\n" or a lone "\r", as
// Python reads them), or 0.
size_t line_break_at(const std::string& text, size_t pos) {
  if (text[pos] == '\n') return 1;
  if (text[pos] == '\r') return pos + 1 < text.size() && text[pos + 1] == '\n' ? 2 : 1;
  return 0;
}

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

std::string escaped(unsigned char c) {
  char code[8];
  std::snprintf(code, sizeof code, "\\x%02x", c);
  return code;
}

// `text` with control characters other than newline and tab escaped, so that
// no NUL cuts a printed message short and no other byte garbles a terminal.
std::string printable(const std::string& text) {
  std::string out;
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    out += is_control(c) && c != '\n' && c != '\t' ? escaped(c) : std::string(1, ch);
  }
  return out;
}

}  // namespace

std::string SourceFile::line_text(int line) const {
  std::call_once(lines_found_, [this] {
    size_t start = 0;
    for (size_t p = 0; p < text.size();) {
      if (size_t n = line_break_at(text, p)) {
        line_starts_.push_back(start);
        line_ends_.push_back(p);
        p += n;
        start = p;
      } else {
        ++p;
      }
    }
    line_starts_.push_back(start);
    line_ends_.push_back(text.size());
  });
  if (line < 1 || static_cast<size_t>(line) > line_starts_.size()) return "";
  return text.substr(line_starts_[line - 1], line_ends_[line - 1] - line_starts_[line - 1]);
}

std::string SourceLoc::str() const {
  if (!valid()) return "<unknown>";
  return file->name + ":" + std::to_string(line + file->first_line - 1) + ":" +
         std::to_string(col);
}

std::string format_diagnostic(const SourceLoc& loc, const std::string& severity,
                              const std::string& message) {
  if (!loc.valid()) return severity + ": " + printable(message);
  std::string out = printable(loc.str()) + ": " + severity + ": " + printable(message) + "\n";
  // The line as printed, and under it the caret at column `col` (a byte index):
  // a tab stays a tab so the caret lines up under tab-indented source, a
  // control character shows as \xNN, and a multi-byte UTF-8 character takes one
  // column.
  std::string line = loc.file->line_text(loc.line), shown, pad;
  for (size_t i = 0; i < line.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    bool before_caret = static_cast<int>(i) + 1 < loc.col;
    if (c == '\t') {
      shown += '\t';
      if (before_caret) pad += '\t';
    } else if (is_control(c)) {
      shown += escaped(c);
      if (before_caret) pad += "    ";
    } else {
      shown += line[i];
      if (before_caret && (c & 0xC0) != 0x80) pad += ' ';
    }
  }
  out += "    " + shown + "\n    " + pad + "^";
  return out;
}

void error_at(const SourceLoc& loc, const std::string& message) {
  throw CompileError(format_diagnostic(loc, "error", message));
}

void error_at(const SourceLoc& loc, const std::string& message, const SourceLoc& note_loc,
              const std::string& note) {
  throw CompileError(format_diagnostic(loc, "error", message) + "\n" +
                     format_diagnostic(note_loc, "note", note));
}

}  // namespace tilec

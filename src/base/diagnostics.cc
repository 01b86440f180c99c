#include "base/diagnostics.h"

namespace tilec {

std::string SourceFile::line_text(int line) const {
  size_t start = 0;
  for (int i = 1; i < line; ++i) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) return "";
    start = nl + 1;
  }
  size_t end = text.find('\n', start);
  if (end == std::string::npos) end = text.size();
  std::string result = text.substr(start, end - start);
  if (!result.empty() && result.back() == '\r') result.pop_back();
  return result;
}

std::string SourceLoc::str() const {
  if (!valid()) return "<unknown>";
  return file->name + ":" + std::to_string(line + file->first_line - 1) + ":" +
         std::to_string(col);
}

std::string format_diagnostic(const SourceLoc& loc, const std::string& severity,
                              const std::string& message) {
  if (!loc.valid()) return severity + ": " + message;
  std::string out = loc.str() + ": " + severity + ": " + message + "\n";
  std::string line = loc.file->line_text(loc.line);
  out += "    " + line + "\n    ";
  // Keep tabs so the caret lines up under tab-indented source.
  for (int i = 1; i < loc.col && i - 1 < static_cast<int>(line.size()); ++i)
    out += line[i - 1] == '\t' ? '\t' : ' ';
  out += "^";
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

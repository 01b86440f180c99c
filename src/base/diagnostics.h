// Source locations and compile errors with a caret under the offending column.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace tilec {

// One piece of kernel source text: a whole file, or one function cut out of a
// file (then first_line says where it starts, so reported lines are the file's).
struct SourceFile {
  std::string name;  // file name as reported in errors
  std::string text;
  int first_line = 1;

  // Text of the 1-based line `line` of `text`, without its line break: lines
  // end at "\n", "\r\n" or a lone "\r", as Python reads them. Codegen asks it once
  // a statement, so the line starts are found once, on the first call (`text` must
  // not change after it).
  std::string line_text(int line) const;

 private:
  mutable std::once_flag lines_found_;
  mutable std::vector<size_t> line_starts_, line_ends_;
};

using SourceFilePtr = std::shared_ptr<const SourceFile>;

// A point in kernel source: `line` and `col` are 1-based and relative to
// `file->text`; a default SourceLoc means "nowhere" (compiler-made nodes).
struct SourceLoc {
  SourceFilePtr file;
  int line = 0;
  int col = 0;

  bool valid() const { return file != nullptr && line > 0; }
  // "file:line:col" with the line as it stands in the original file.
  std::string str() const;
};

// The one error type of the compiler. what() is the complete text a user sees:
//   file:line:col: error: message
//       the source line
//       ^
class CompileError : public std::runtime_error {
 public:
  explicit CompileError(const std::string& text) : std::runtime_error(text) {}
};

// A call-time error (argument count, dtype, rank, shape, device, a scalar's range);
// Python maps it to ValueError.
class ArgumentError : public std::runtime_error {
 public:
  explicit ArgumentError(const std::string& text) : std::runtime_error(text) {}
};

// An argument of the wrong kind: a scalar for a tensor param, a tensor for a scalar one, a
// float for an integer one. Python maps it to TypeError.
class ArgumentTypeError : public ArgumentError {
 public:
  using ArgumentError::ArgumentError;
};

// Formats a located diagnostic; `note` lines are appended as further located
// notes (used for conflicts that have two sides). Control characters other than
// newline and tab, in the message or the source line, are written as \xNN (a NUL
// would end the text where C strings are printed).
std::string format_diagnostic(const SourceLoc& loc, const std::string& severity,
                              const std::string& message);

[[noreturn]] void error_at(const SourceLoc& loc, const std::string& message);

// An error with a second location ("note: ... here").
[[noreturn]] void error_at(const SourceLoc& loc, const std::string& message,
                           const SourceLoc& note_loc, const std::string& note);

}  // namespace tilec

// Tokenizer for the kernel language: Python 3 tokens, with NEWLINE / INDENT /
// DEDENT computed from an indentation stack as CPython's tokenizer does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/diagnostics.h"

namespace tilec::frontend {

enum class TokenKind {
  Name,       // identifiers, soft keywords (match, case, type) included
  Keyword,    // Python's hard keywords (if, def, True, None, ...)
  Int,        // int_value
  Float,      // float_value
  Imaginary,  // 1j, 2.5J (float_value holds the imaginary part)
  String,     // one literal; str_value holds the decoded text of a plain string
  Op,         // operators and delimiters: "+", "**=", "(", "->", "...", ...
  Newline,    // end of a logical line
  Indent,
  Dedent,
  End,
};

// Whether `text` is one Python name as the lexer reads them (letters, digits, _ and
// non-ASCII bytes, not starting with a digit).
bool is_identifier(std::string_view text);

// Literals that lex like strings but are not plain text.
enum class StringFlavor { Plain, Format, Bytes };

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;  // the spelling in the source (empty for Newline/Indent/Dedent/End)
  SourceLoc loc;     // the first character; Newline, and Dedent/End at the end of the
                     // text, sit just after the last token of the line
  int64_t int_value = 0;
  double float_value = 0;
  std::string str_value;
  StringFlavor flavor = StringFlavor::Plain;
  bool named_escape = false;  // a plain string with \N{name} escapes, left out of str_value
};

// Splits `file->text` into tokens ending with End. The indentation of the first
// non-blank, non-comment line is the base level (text cut out of a file keeps its
// indentation); columns are those of the text. Throws CompileError.
std::vector<Token> tokenize(const SourceFilePtr& file);

}  // namespace tilec::frontend

#include "frontend/lexer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <utility>

#include "frontend/limits.h"

namespace tilec::frontend {
namespace {

constexpr const char* kKeywords[] = {
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};

// Longer spellings first, so the first match is the longest.
constexpr const char* kOperators[] = {
    "**=", "//=", ">>=", "<<=", "...", "**", "//", ">>", "<<", "<=", ">=", "==",
    "!=",  "->",  ":=",  "+=",  "-=",  "*=", "/=", "%=", "&=", "|=", "^=", "@=",
    "+",   "-",   "*",   "/",   "%",   "@",  "&",  "|",  "^",  "~",  "<",  ">",
    "(",   ")",   "[",   "]",   "{",   "}",  ",",  ":",  ".",  ";",  "="};

constexpr const char* kInconsistentTabs = "inconsistent use of tabs and spaces in indentation";

// Bytes of multi-byte UTF-8 sequences count as identifier characters.
bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool is_ident_char(char c) {
  return is_ident_start(c) || std::isdigit(static_cast<unsigned char>(c));
}

bool is_digit_of(char c, int base) {
  if (base == 16) return std::isxdigit(static_cast<unsigned char>(c));
  return c >= '0' && c < '0' + base;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  return (c | 0x20) - 'a' + 10;
}

bool is_keyword(std::string_view word) {
  for (const char* k : kKeywords)
    if (word == k) return true;
  return false;
}

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_string_prefix(const std::string& word) {
  std::string p = lowercase(word);
  return p == "r" || p == "u" || p == "f" || p == "b" || p == "rb" || p == "br" || p == "fr" ||
         p == "rf";
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// The text with each lone "\r" (old Mac line ends) made "\n": the same length,
// lines and columns, and the rest of the lexer knows "\n" and "\r\n" only.
std::string with_newlines(std::string text) {
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')) text[i] = '\n';
  return text;
}

class Lexer {
 public:
  explicit Lexer(const SourceFilePtr& file) : file_(file), text_(with_newlines(file->text)) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < text_.size(); ++i)
      if (text_[i] == '\n') line_starts_.push_back(i + 1);
    // As Python: a NUL would end the text for any C-string reader of it.
    size_t nul = text_.find('\0');
    if (nul != std::string::npos) fail(nul, "source code cannot contain null bytes");
  }

  std::vector<Token> run();

 private:
  SourceLoc loc_at(size_t pos) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), pos);
    int line = static_cast<int>(it - line_starts_.begin());
    return SourceLoc{file_, line, static_cast<int>(pos - line_starts_[line - 1]) + 1};
  }
  [[noreturn]] void fail(size_t pos, const std::string& message) const {
    error_at(loc_at(pos), message);
  }
  char at(size_t pos) const { return pos < text_.size() ? text_[pos] : '\0'; }

  Token& emit(TokenKind kind, size_t start, size_t end);
  void emit_marker(TokenKind kind, size_t pos);
  bool start_line();
  void indent_to(int col, int alt_col, size_t pos);
  void end_line();
  void continuation();
  void lex_number();
  void lex_name_or_string();
  void lex_string(size_t start, size_t quote);
  size_t scan_string(size_t start, size_t quote, bool raw, bool format, std::string* out);
  size_t decode_escape(size_t pos, std::string& out);
  void lex_operator();

  SourceFilePtr file_;
  const std::string text_;
  std::vector<size_t> line_starts_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  size_t last_end_ = 0;  // just after the last token
  bool line_has_tokens_ = false;
  // The string being decoded has a \N{...} escape.
  bool named_escape_ = false;
  std::vector<std::pair<char, size_t>> brackets_;  // open brackets and their positions
  // Indentation columns with tabs to the next multiple of 8, and with tabs as one
  // column: the two must order lines the same way, as in CPython.
  std::vector<int> indents_, alt_indents_;
};

Token& Lexer::emit(TokenKind kind, size_t start, size_t end) {
  Token& t = tokens_.emplace_back();
  t.kind = kind;
  t.text = text_.substr(start, end - start);
  t.loc = loc_at(start);
  last_end_ = end;
  line_has_tokens_ = true;
  pos_ = end;
  return t;
}

void Lexer::emit_marker(TokenKind kind, size_t pos) {
  Token& t = tokens_.emplace_back();
  t.kind = kind;
  t.loc = loc_at(pos);
}

std::vector<Token> Lexer::run() {
  bool line_start = true;
  while (true) {
    if (line_start && brackets_.empty()) {
      if (!start_line()) break;
      line_start = false;
    }
    if (pos_ >= text_.size()) break;
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
      ++pos_;
    } else if (c == '#') {
      pos_ = std::min(text_.find('\n', pos_), text_.size());
    } else if (c == '\n') {
      ++pos_;
      if (brackets_.empty()) {
        end_line();
        line_start = true;
      }
    } else if (c == '\\') {
      continuation();
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && std::isdigit(static_cast<unsigned char>(at(pos_ + 1))))) {
      lex_number();
    } else if (is_ident_start(c)) {
      lex_name_or_string();
    } else if (c == '\'' || c == '"') {
      lex_string(pos_, pos_);
    } else {
      lex_operator();
    }
  }
  if (!brackets_.empty())
    fail(brackets_.back().second, std::string("'") + brackets_.back().first + "' was never closed");
  end_line();
  for (size_t i = 1; i < indents_.size(); ++i) emit_marker(TokenKind::Dedent, last_end_);
  emit_marker(TokenKind::End, last_end_);
  return std::move(tokens_);
}

// At the start of a logical line: skips blank and comment-only lines, then turns
// the indentation of the next line into INDENT/DEDENT. False at the end of the text.
bool Lexer::start_line() {
  while (true) {
    int col = 0, alt_col = 0;
    size_t p = pos_;
    for (; p < text_.size(); ++p) {
      char c = text_[p];
      if (c == ' ') {
        ++col;
        ++alt_col;
      } else if (c == '\t') {
        col = (col / 8 + 1) * 8;
        ++alt_col;
      } else if (c == '\f') {
        col = alt_col = 0;
      } else {
        break;
      }
    }
    if (p >= text_.size()) {
      pos_ = p;
      return false;
    }
    char c = text_[p];
    if (c == '#' || c == '\n' || (c == '\r' && at(p + 1) == '\n')) {
      size_t nl = text_.find('\n', p);
      if (nl == std::string::npos) {
        pos_ = text_.size();
        return false;
      }
      pos_ = nl + 1;
      continue;
    }
    pos_ = p;
    indent_to(col, alt_col, p);
    return true;
  }
}

void Lexer::indent_to(int col, int alt_col, size_t pos) {
  if (indents_.empty()) {
    indents_.push_back(col);
    alt_indents_.push_back(alt_col);
    return;
  }
  if (col < indents_.front()) fail(pos, "line is indented less than the first line of the code");
  if (col > indents_.back()) {
    if (alt_col <= alt_indents_.back()) fail(pos, kInconsistentTabs);
    // Python's own limit; it also bounds the parser's recursion over blocks.
    if (static_cast<int>(indents_.size()) >= kMaxIndentLevels)
      fail(pos, "too many levels of indentation (the limit is " + std::to_string(kMaxIndentLevels) + ")");
    indents_.push_back(col);
    alt_indents_.push_back(alt_col);
    emit_marker(TokenKind::Indent, pos);
    return;
  }
  while (col < indents_.back()) {
    indents_.pop_back();
    alt_indents_.pop_back();
    emit_marker(TokenKind::Dedent, pos);
  }
  if (col != indents_.back()) fail(pos, "unindent does not match any outer indentation level");
  if (alt_col != alt_indents_.back()) fail(pos, kInconsistentTabs);
}

void Lexer::end_line() {
  if (!line_has_tokens_) return;
  emit_marker(TokenKind::Newline, last_end_);
  line_has_tokens_ = false;
}

void Lexer::continuation() {
  size_t p = pos_ + 1;
  if (at(p) == '\r') ++p;
  if (p >= text_.size()) fail(pos_, "unexpected end of file after line continuation character");
  if (text_[p] != '\n') fail(pos_, "unexpected character after line continuation character");
  pos_ = p + 1;
}

void Lexer::lex_number() {
  size_t start = pos_, p = pos_;
  std::string digits;  // the literal without underscores and prefix
  // Reads digit ('_'? digit)* in `base`; false if there is no digit at p.
  auto take = [&](int base, const char* invalid) {
    if (!is_digit_of(at(p), base)) return false;
    while (true) {
      digits += text_[p++];
      if (at(p) == '_') {
        ++p;
        if (!is_digit_of(at(p), base)) fail(start, invalid);
      } else if (!is_digit_of(at(p), base)) {
        return true;
      }
    }
  };

  char prefix = static_cast<char>(at(p + 1) | 0x20);
  if (text_[p] == '0' && (prefix == 'x' || prefix == 'o' || prefix == 'b')) {
    int base = prefix == 'x' ? 16 : prefix == 'o' ? 8 : 2;
    const char* name = base == 16 ? "hexadecimal" : base == 8 ? "octal" : "binary";
    std::string invalid = std::string("invalid ") + name + " literal";
    p += 2;
    if (at(p) == '_') ++p;
    bool any = take(base, invalid.c_str());
    if (std::isdigit(static_cast<unsigned char>(at(p))))
      fail(p, std::string("invalid digit '") + at(p) + "' in " + name + " literal");
    if (!any || is_ident_char(at(p)) || at(p) == '.') fail(start, invalid);
    Token& t = emit(TokenKind::Int, start, p);
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), t.int_value, base);
    if (r.ec != std::errc()) fail(start, "integer literal too large");
    return;
  }

  const char* invalid = "invalid decimal literal";
  take(10, invalid);
  bool is_float = false;
  if (at(p) == '.') {
    is_float = true;
    digits += text_[p++];
    take(10, invalid);
  }
  if ((at(p) | 0x20) == 'e') {
    size_t q = p + 1;
    if (at(q) == '+' || at(q) == '-') ++q;
    if (!std::isdigit(static_cast<unsigned char>(at(q)))) fail(start, invalid);
    digits += text_.substr(p, q - p);
    p = q;
    take(10, invalid);
    is_float = true;
  }
  bool imaginary = (at(p) | 0x20) == 'j';
  if (imaginary) ++p;
  if (is_ident_char(at(p))) fail(start, invalid);

  if (!is_float && !imaginary) {
    if (digits.size() > 1 && digits[0] == '0' && digits.find_first_not_of('0') != std::string::npos)
      fail(start,
           "leading zeros in decimal integer literals are not permitted; use an 0o prefix "
           "for octal integers");
    Token& t = emit(TokenKind::Int, start, p);
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), t.int_value);
    if (r.ec != std::errc()) fail(start, "integer literal too large");
    return;
  }
  Token& t = emit(imaginary ? TokenKind::Imaginary : TokenKind::Float, start, p);
  auto r = std::from_chars(digits.data(), digits.data() + digits.size(), t.float_value);
  // Out of range is overflow to infinity, or underflow to zero, as Python rounds them;
  // only a negative exponent can underflow (barring absurdly long mantissas).
  if (r.ec == std::errc::result_out_of_range)
    t.float_value = digits.find("e-") != std::string::npos ? 0.0 : HUGE_VAL;
}

void Lexer::lex_name_or_string() {
  size_t start = pos_, p = pos_;
  while (p < text_.size() && is_ident_char(text_[p])) ++p;
  std::string word = text_.substr(start, p - start);
  if ((at(p) == '\'' || at(p) == '"') && is_string_prefix(word)) {
    lex_string(start, p);
    return;
  }
  emit(is_keyword(word) ? TokenKind::Keyword : TokenKind::Name, start, p);
}

void Lexer::lex_string(size_t start, size_t quote) {
  std::string prefix = lowercase(text_.substr(start, quote - start));
  bool raw = prefix.find('r') != std::string::npos;
  StringFlavor flavor = prefix.find('f') != std::string::npos   ? StringFlavor::Format
                        : prefix.find('b') != std::string::npos ? StringFlavor::Bytes
                                                                : StringFlavor::Plain;
  std::string value;
  named_escape_ = false;
  size_t end = scan_string(start, quote, raw, flavor == StringFlavor::Format,
                           flavor == StringFlavor::Plain ? &value : nullptr);
  Token& t = emit(TokenKind::String, start, end);
  t.flavor = flavor;
  t.str_value = std::move(value);
  t.named_escape = named_escape_;
}

// Finds the end of the literal whose prefix starts at `start` and quote is at `quote`,
// decoding a plain string into `out`. Replacement fields of f-strings may hold
// nested literals with any quotes (Python 3.12); format specs after ':' are text.
size_t Lexer::scan_string(size_t start, size_t quote, bool raw, bool format, std::string* out) {
  const char q = text_[quote];
  const bool triple = at(quote + 1) == q && at(quote + 2) == q;
  struct Field {
    bool spec;  // in the format spec, else in the expression
    int depth;  // brackets open inside the expression
  };
  std::vector<Field> fields;
  size_t p = quote + (triple ? 3 : 1);
  while (true) {
    if (p >= text_.size())
      fail(start,
           triple ? "unterminated triple-quoted string literal" : "unterminated string literal");
    char c = text_[p];
    if (c == '\n' && !triple) fail(start, "unterminated string literal");
    if (!fields.empty() && !fields.back().spec) {
      Field& field = fields.back();
      if (c == '\'' || c == '"') {
        size_t nested = p;
        while (nested > 0 && std::isalpha(static_cast<unsigned char>(text_[nested - 1]))) --nested;
        std::string nested_prefix = lowercase(text_.substr(nested, p - nested));
        if (!is_string_prefix(nested_prefix)) {
          nested = p;
          nested_prefix.clear();
        }
        p = scan_string(nested, p, nested_prefix.find('r') != std::string::npos,
                        nested_prefix.find('f') != std::string::npos, nullptr);
        continue;
      }
      if (c == '(' || c == '[' || c == '{') {
        ++field.depth;
      } else if ((c == ')' || c == ']') && field.depth > 0) {
        --field.depth;
      } else if (c == '}') {
        if (field.depth > 0) --field.depth;
        else fields.pop_back();
      } else if (c == ':' && field.depth == 0) {
        field.spec = true;
      }
      ++p;
      continue;
    }
    if (c == q && fields.empty() && (!triple || (at(p + 1) == q && at(p + 2) == q)))
      return p + (triple ? 3 : 1);
    if (format && c == '{') {
      if (fields.empty() && at(p + 1) == '{') {
        p += 2;
        continue;
      }
      fields.push_back({false, 0});
      ++p;
      continue;
    }
    if (format && c == '}') {
      if (!fields.empty()) fields.pop_back();
      else if (at(p + 1) == '}') ++p;
      ++p;
      continue;
    }
    // In f-strings a backslash does not escape a brace.
    if (c == '\\' && p + 1 < text_.size() && !(format && (at(p + 1) == '{' || at(p + 1) == '}'))) {
      if (raw || !out) {
        if (out) out->append(text_, p, 2);
        p += 2;
      } else {
        p = decode_escape(p, *out);
      }
      continue;
    }
    if (out && !(c == '\r' && at(p + 1) == '\n')) *out += c;
    ++p;
  }
}

// Decodes the escape sequence whose backslash is at `pos`; returns the position after it.
size_t Lexer::decode_escape(size_t pos, std::string& out) {
  char e = text_[pos + 1];
  auto hex = [&](int count, const char* truncated) {
    uint32_t cp = 0;
    for (int i = 0; i < count; ++i) {
      char d = at(pos + 2 + i);
      if (!std::isxdigit(static_cast<unsigned char>(d))) fail(pos, truncated);
      cp = cp * 16 + hex_value(d);
    }
    if (cp > 0x10FFFF) fail(pos, "illegal Unicode character in \\U escape");
    append_utf8(out, cp);
    return pos + 2 + count;
  };
  switch (e) {
    case '\n': return pos + 2;
    case '\r': return at(pos + 2) == '\n' ? pos + 3 : pos + 2;
    case '\\':
    case '\'':
    case '"': out += e; return pos + 2;
    case 'a': out += '\a'; return pos + 2;
    case 'b': out += '\b'; return pos + 2;
    case 'f': out += '\f'; return pos + 2;
    case 'n': out += '\n'; return pos + 2;
    case 'r': out += '\r'; return pos + 2;
    case 't': out += '\t'; return pos + 2;
    case 'v': out += '\v'; return pos + 2;
    case 'x': return hex(2, "truncated \\xXX escape");
    case 'u': return hex(4, "truncated \\uXXXX escape");
    case 'U': return hex(8, "truncated \\UXXXXXXXX escape");
    case 'N': {
      size_t close = text_.find('}', pos);
      if (at(pos + 2) != '{' || close == std::string::npos ||
          text_.find_first_of("\n'\"", pos) < close)
        fail(pos, "malformed \\N character escape");
      named_escape_ = true;
      return close + 1;
    }
    default: break;
  }
  if (e >= '0' && e <= '7') {
    uint32_t cp = 0;
    size_t p = pos + 1;
    for (int i = 0; i < 3 && at(p) >= '0' && at(p) <= '7'; ++i) cp = cp * 8 + (text_[p++] - '0');
    append_utf8(out, cp);
    return p;
  }
  // Python keeps unknown escapes as written.
  out += '\\';
  return pos + 1;
}

void Lexer::lex_operator() {
  for (const char* op : kOperators) {
    size_t n = std::strlen(op);
    if (text_.compare(pos_, n, op) != 0) continue;
    char c = op[0];
    if (n == 1 && (c == '(' || c == '[' || c == '{')) {
      brackets_.emplace_back(c, pos_);
    } else if (n == 1 && (c == ')' || c == ']' || c == '}')) {
      if (brackets_.empty()) fail(pos_, std::string("unmatched '") + c + "'");
      char open = brackets_.back().first;
      if ((open == '(' ? ')' : open == '[' ? ']' : '}') != c)
        fail(pos_, std::string("closing parenthesis '") + c +
                       "' does not match opening parenthesis '" + open + "'");
      brackets_.pop_back();
    }
    emit(TokenKind::Op, pos_, pos_ + n);
    return;
  }
  unsigned char c = static_cast<unsigned char>(text_[pos_]);
  if (std::isprint(c)) fail(pos_, std::string("invalid character '") + text_[pos_] + "'");
  char code[8];
  std::snprintf(code, sizeof code, "%04X", c);
  fail(pos_, std::string("invalid non-printable character U+") + code);
}

}  // namespace

std::vector<Token> tokenize(const SourceFilePtr& file) { return Lexer(file).run(); }

bool is_identifier(std::string_view text) {
  if (text.empty() || !is_ident_start(text[0])) return false;
  for (char c : text)
    if (!is_ident_char(c)) return false;
  return true;
}

}  // namespace tilec::frontend

#include "frontend/int_ops.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace tilec::frontend {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

[[noreturn]] void overflow(const std::string& operation, const SourceLoc& loc) {
  error_at(loc, "compile-time integer overflow: " + operation +
                    " does not fit in 64 bits (tilec folds Python ints as int64)");
}

// "x op y" as Python would need it written: a negative right operand (and a
// negative base of **) in parentheses.
std::string operation_text(const std::string& op, int64_t x, int64_t y) {
  auto operand = [](int64_t v, bool parenthesize) {
    bool parens = parenthesize && v < 0;
    std::string text = parens ? "(" : "";
    text += std::to_string(v);
    if (parens) text += ')';
    return text;
  };
  return operand(x, op == "**") + " " + op + " " + operand(y, true);
}

int64_t floor_div(int64_t x, int64_t y) {
  int64_t q = x / y;
  if (x % y != 0 && ((x < 0) != (y < 0))) --q;
  return q;
}

int64_t floor_mod(int64_t x, int64_t y) {
  int64_t r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}

// x ** y for y >= 0 by squaring: O(log y) steps whatever y is.
bool power(int64_t x, int64_t y, int64_t* out) {
  int64_t result = 1, base = x;
  while (true) {
    if ((y & 1) && __builtin_mul_overflow(result, base, &result)) return false;
    y >>= 1;
    if (y == 0) break;
    // More factors of the base are still to come, so a square that overflows
    // means the result does (|base| >= 2 here, as 0, 1 and -1 square exactly).
    if (__builtin_mul_overflow(base, base, &base)) return false;
  }
  *out = result;
  return true;
}

}  // namespace

int64_t fold_int(const std::string& op, int64_t x, int64_t y, const SourceLoc& loc) {
  int64_t r = 0;
  bool fits = true;
  if (op == "+") {
    fits = !__builtin_add_overflow(x, y, &r);
  } else if (op == "-") {
    fits = !__builtin_sub_overflow(x, y, &r);
  } else if (op == "*") {
    fits = !__builtin_mul_overflow(x, y, &r);
  } else if (op == "//" || op == "%") {
    if (y == 0) error_at(loc, "integer division or modulo by zero");
    if (y == -1) {  // the one divisor whose quotient can overflow (INT64_MIN // -1)
      if (op == "%") return 0;
      fits = !__builtin_sub_overflow(int64_t{0}, x, &r);
    } else {
      r = op == "//" ? floor_div(x, y) : floor_mod(x, y);
    }
  } else if (op == "**") {
    if (y < 0) throw std::invalid_argument("fold_int: ** with a negative exponent is a float");
    fits = power(x, y, &r);
  } else if (op == "<<" || op == ">>") {
    if (y < 0) error_at(loc, "negative shift count (" + operation_text(op, x, y) + ")");
    if (op == ">>") return y >= 64 ? (x < 0 ? -1 : 0) : x >> y;
    if (x == 0) return 0;
    if (y >= 64) overflow(operation_text(op, x, y), loc);
    r = static_cast<int64_t>(static_cast<uint64_t>(x) << y);
    fits = (r >> y) == x;
  } else if (op == "&") {
    return x & y;
  } else if (op == "|") {
    return x | y;
  } else if (op == "^") {
    return x ^ y;
  } else {
    error_at(loc, "operator '" + op + "' is not defined for ints");
  }
  if (!fits) overflow(operation_text(op, x, y), loc);
  return r;
}

int64_t negate_int(int64_t x, const SourceLoc& loc) {
  if (x == kMin) overflow("-(" + std::to_string(x) + ")", loc);
  return -x;
}

int64_t abs_int(int64_t x, const SourceLoc& loc) {
  if (x == kMin) overflow("abs(" + std::to_string(x) + ")", loc);
  return x < 0 ? -x : x;
}

int64_t float_to_int(double v, const SourceLoc& loc) {
  if (std::isnan(v)) error_at(loc, "cannot convert float NaN to integer");
  if (std::isinf(v)) error_at(loc, "cannot convert float infinity to integer");
  double t = std::trunc(v);
  const double limit = std::ldexp(1.0, 63);  // 2**63, exact in a double
  if (t < -limit || t >= limit) {
    char text[32];
    auto end = std::to_chars(text, text + sizeof text, v).ptr;
    overflow("int(" + std::string(text, end) + ")", loc);
  }
  return static_cast<int64_t>(t);
}

int64_t parse_int(const std::string& text, const SourceLoc& loc) {
  auto invalid = [&]() -> int64_t {
    error_at(loc, "invalid literal for int() with base 10: '" + text + "'");
  };
  const char* spaces = " \t\n\r\f\v";
  size_t begin = text.find_first_not_of(spaces);
  if (begin == std::string::npos) return invalid();
  size_t end = text.find_last_not_of(spaces) + 1;
  size_t p = begin;
  bool negative = text[p] == '-';
  if (text[p] == '-' || text[p] == '+') ++p;
  std::string digits;
  for (; p < end; ++p) {
    char c = text[p];
    if (c >= '0' && c <= '9') {
      digits += c;
    } else if (c == '_' && !digits.empty() && p + 1 < end && text[p + 1] >= '0' && text[p + 1] <= '9') {
      continue;
    } else {
      return invalid();
    }
  }
  if (digits.empty()) return invalid();
  // Read with the sign so that -9223372036854775808 fits.
  if (negative) digits.insert(digits.begin(), '-');
  int64_t value = 0;
  auto r = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (r.ec == std::errc::result_out_of_range) overflow("int('" + text + "')", loc);
  return value;
}

}  // namespace tilec::frontend

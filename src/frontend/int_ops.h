// Python's operators on compile-time integers. Python's ints are unbounded and
// tilec's are int64: each operation gives Python's exact result, or a located
// error that names the operation when that result does not fit in 64 bits (or
// does not exist: division by zero, a negative shift count). A folded value
// never wraps.
#pragma once

#include <cstdint>
#include <string>

#include "base/diagnostics.h"

namespace tilec::frontend {

// x op y for op in + - * // % ** << >> & | ^, with Python's signs for // and %
// (the quotient rounds toward minus infinity, the remainder takes the divisor's
// sign). ** takes a non-negative exponent (a negative one gives a float).
int64_t fold_int(const std::string& op, int64_t x, int64_t y, const SourceLoc& loc);

// -x and abs(x).
int64_t negate_int(int64_t x, const SourceLoc& loc);
int64_t abs_int(int64_t x, const SourceLoc& loc);

// int(v) of a float: truncation toward zero; NaN, the infinities and values
// outside int64 are errors.
int64_t float_to_int(double v, const SourceLoc& loc);

// int(text) of a string as Python reads it: optional whitespace and sign,
// decimal digits with single underscores between them.
int64_t parse_int(const std::string& text, const SourceLoc& loc);

}  // namespace tilec::frontend

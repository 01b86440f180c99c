// The pure math intrinsics a Call may name. Each backend maps every entry of
// this list to its own spelling; the printer writes them as T.<name>(...).
#pragma once

#include <string_view>

namespace tilec::ir {

// X(name, arity, returns_bool, float_only). abs also takes integers.
#define TILEC_FOR_EACH_INTRINSIC(X) \
  X(exp, 1, false, true)            \
  X(exp2, 1, false, true)           \
  X(exp10, 1, false, true)          \
  X(log, 1, false, true)            \
  X(log2, 1, false, true)           \
  X(log10, 1, false, true)          \
  X(sqrt, 1, false, true)           \
  X(rsqrt, 1, false, true)          \
  X(sin, 1, false, true)            \
  X(cos, 1, false, true)            \
  X(tan, 1, false, true)            \
  X(tanh, 1, false, true)           \
  X(sigmoid, 1, false, true)        \
  X(erf, 1, false, true)            \
  X(abs, 1, false, false)           \
  X(floor, 1, false, true)          \
  X(ceil, 1, false, true)           \
  X(round, 1, false, true)          \
  X(trunc, 1, false, true)          \
  X(pow, 2, false, true)            \
  X(fmod, 2, false, true)           \
  X(isnan, 1, true, true)           \
  X(isinf, 1, true, true)           \
  X(isfinite, 1, true, true)

// reinterpret(x): the bits of x read as the Call's dtype, which has x's size (T.reinterpret).
// Not a math intrinsic: its result type is the Call's, not its argument's.
inline constexpr std::string_view kReinterpret = "reinterpret";

struct IntrinsicInfo {
  const char* name;
  int arity;
  bool returns_bool;  // result is bool; otherwise the argument's dtype
  bool float_only;    // arguments must be floats
};

// The entry named `name`, or null when there is none.
const IntrinsicInfo* find_intrinsic(std::string_view name);

}  // namespace tilec::ir

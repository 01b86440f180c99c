// tilec.math's integer helpers inside kernels, as TileLang's eager kernels call them on
// compile-time values (`block_T = min(128, tilelang.math.next_power_of_2(dim))`,
// `NK = tilelang.cdiv(dim, block_T)`): tilec.math.next_power_of_2 and tilec.math.cdiv, also as
// tilec.next_power_of_2 and tilec.cdiv (python/tilec/math.py is the same for factories).
#include "frontend/builtin_table.h"

namespace tilec::frontend {

// The least power of 2 at or above a compile-time int of at least 1.
static CtValue next_power_of_2(Elaborator& el, const EvaluatedCall& c) {
  CallArgs a = el.bind(c, {"x"});
  const int64_t x = el.to_int(a["x"], a.loc("x"), c.callee_name + " argument");
  if (x < 1 || x > (int64_t{1} << 62))
    error_at(a.loc("x"), c.callee_name + " takes an int from 1 to 2**62, not " + std::to_string(x));
  int64_t power = 1;
  while (power < x) power <<= 1;
  return CtValue::of_int(power);
}

void add_tilec_math_builtins(BuiltinTable& t) {
  t["tilec.math.next_power_of_2"] = next_power_of_2;
  t["tilec.next_power_of_2"] = next_power_of_2;
  // T.ceildiv's: (a + b - 1) // b, on constants, symbolic dims and runtime values.
  t["tilec.math.cdiv"] = [](Elaborator& el, const EvaluatedCall& c) { return el.call_builtin("T.ceildiv", c); };
  t["tilec.cdiv"] = t["tilec.math.cdiv"];
}

}  // namespace tilec::frontend

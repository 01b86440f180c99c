// Constant folding and algebraic identities that keep exact semantics.
//
// Integer arithmetic wraps to the dtype's width, FloorDiv/FloorMod follow
// Python, integer Div truncates; nothing is folded that would need a rounding
// the target does differently: division or modulo by a constant zero, casts to
// or from float16/bfloat16/float8, arithmetic on those types, float floor
// div/mod, math intrinsics. Float Min/Max fold only without NaN or signed zeros.
//
// Identities (x + 0, x * 1, x * 0, x - x, x == x, regrouping of constants and
// cancelling of like terms in sums) apply to integers only: for floats they
// would change NaN, infinities, rounding or the sign of zero. Constants move to
// the right of commutative operators. Two identities assume that index
// arithmetic does not overflow, as usual for index math: (x * c) // c -> x and
// (x * c) % c -> 0 (c > 0; also for multiples of c).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace tilec::ir {

// Folds and rewrites bottom-up; returns the same handle when nothing changed.
Expr simplify(const Expr& e);

// As above for every expression, and also: IfThenElse with a constant
// condition becomes the taken branch; a For whose extent is a constant <= 0
// disappears; a For of extent 1 becomes its body with the var replaced by min;
// a LetStmt binding a constant is substituted into its body; nested Seqs are
// flattened. Where a statement disappears entirely the result is an empty Seq
// (make_seq({})), never a null Stmt.
Stmt simplify(const Stmt& s);

// An integer expression as `constant + sum(coef * term)`, seeing through +, -
// and multiplication by constants; structurally equal terms are merged and
// terms whose coefficients cancel are dropped. Terms are in order of first
// appearance. The arithmetic is exact over int64 (not wrapped to e's dtype);
// nullopt when it would overflow int64.
struct LinearSum {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;
};
std::optional<LinearSum> linear_sum(const Expr& e);

}  // namespace tilec::ir

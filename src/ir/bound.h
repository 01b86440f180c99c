// Interval analysis of integer expressions, used to prove index conditions
// (and so drop bounds checks) from the ranges of loop and block variables.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "ir/ir.h"

namespace tilec::ir {

// All values v with min <= v <= max.
struct Interval {
  int64_t min, max;
};

// Bounds are sound for the IR's wrapping integer arithmetic: where a
// subexpression might leave its dtype's range (and so wrap), its bound widens
// to the whole range of the dtype. A value about which nothing is known (an
// unbound Var, a load, a call) also gets its dtype's whole range.
class BoundAnalyzer {
 public:
  // `var` (a Var) takes values in `range` (intersected with its dtype's range).
  void bind(const Expr& var, Interval range);

  // Bounds of an integer or bool expression; nullopt for other dtypes (floats,
  // and uint64, whose range an int64 interval cannot hold).
  std::optional<Interval> bound(const Expr& e) const;

  // True only when `condition` holds for every value of the bound Vars.
  // Handles constants, comparisons of integers (through the bound of a - b
  // after cancelling like terms, so x + 1 < x + 2 is provable where x cannot
  // wrap), And, Or and Not. False means "not proven", not "false".
  bool can_prove(const Expr& condition) const;

 private:
  std::optional<Interval> eval(const Expr& e, bool* may_wrap) const;
  bool prove(const Expr& condition, bool expected) const;
  bool prove_compare(ExprKind kind, const Expr& a, const Expr& b) const;

  std::unordered_map<const ExprNode*, Interval> ranges_;
};

}  // namespace tilec::ir

// Proofs that two indices of a shared-memory access never name the same element, whichever
// threads make them: insert_barriers needs no barrier between two such accesses.
//
// - By ranges: every value one index takes (over the threads' and loop vars' ranges) lies below
//   every value of the other (a row's columns 0..511 and its columns 512..575).
// - Across iterations of a loop: an access made in one iteration and the same access made in
//   another: `x` is `y` with the loop var `var` renamed `other`, a var of the same range that
//   stands for another iteration's value, and other vars maybe renamed to vars of the same
//   ranges that stand for any of their values (`originals` maps each such var, `other`
//   included, to the var it stands for). The index is S * var + r for a constant S, and
//   either r spans fewer than |S| values (`s[32 * round + lane / 4]`: each iteration has a
//   window of its own), or each variable term of r is a multiple of some G with
//   |S| * (the values var takes) <= G (`s[64 * c + 16 * part + e]` over e < 16: each
//   iteration of e has a residue mod 16 of its own).
#pragma once

#include "ir/bound.h"
#include "ir/ir.h"
#include "ir/substitute.h"

namespace tilec::passes {

bool ranges_apart(const ir::Expr& x, const ir::Expr& y, const ir::BoundAnalyzer& bounds);

bool iterations_apart(const ir::Expr& x, const ir::Expr& y, const ir::Expr& other, const ir::Expr& var,
                      const ir::VarMap& originals, const ir::BoundAnalyzer& bounds);

}  // namespace tilec::passes

// Structural equality of IR trees.
#pragma once

#include "ir/ir.h"

namespace tilec::ir {

// True when both trees have the same shape: node kinds, dtypes, immediates
// (NaN equals NaN; 0.0 and -0.0 differ), call names, loop kinds, op flags.
// Variables: a Var defined inside the trees (For var, LetStmt var, block vars)
// matches the Var defined at the same position on the other side, whatever its
// name. A free Var (defined outside, like a parameter or a shape dimension)
// matches only itself, unless map_free_vars, in which case free Vars are paired
// on first use and must stay paired one-to-one (and agree in dtype).
// Buffers match when name, dtype, scope and shape (compared structurally) agree;
// strides are not compared.
bool structural_equal(const Expr& a, const Expr& b, bool map_free_vars = false);
bool structural_equal(const Stmt& a, const Stmt& b, bool map_free_vars = false);

}  // namespace tilec::ir

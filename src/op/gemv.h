// T.gemv (ir::Gemv): y (+)= a @ x, a a 2-D tile, x and y 1-D.
#pragma once

#include "op/op.h"

namespace tilec::op {

// With accumulate the product is added to what y held: y is read too.
Regions regions(const ir::Gemv& op);

// One site over y: a's rows and x's whole length on the thread of each element of y.
LayoutConstraints layout_constraints(const ir::Gemv& op);

// That a is a 2-D tile, x and y 1-D, of lengths that agree with a's; each error at its
// operand's location.
void check(const ir::Gemv& op, const SourceLoc& a_loc, const SourceLoc& x_loc, const SourceLoc& y_loc);

// The op as element loops: y[n] = (accumulate ? y[n] : 0) + sum over k of a[n, k] * x[k].
ir::Stmt lower(const ir::Gemv& op, const ir::Stmt& self, Lowering& l);

}  // namespace tilec::op

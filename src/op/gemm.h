// T.gemm (ir::Gemm): c (+)= op(a) @ op(b) over 2-D tiles.
#pragma once

#include "op/op.h"

namespace tilec::op {

// Without clear_accum the product is added to what c held: c is read too.
Regions regions(const ir::Gemm& op);

// As element loops (the target runs it on no tensor core; a target that does lays its
// operands out itself): one site over c, each element with its row of a and column of b.
LayoutConstraints layout_constraints(const ir::Gemm& op);

// That a, b and c are 2-D tiles whose M, N and K agree, and c a float or int32 accumulator;
// each error at its operand's location (the K dims' at the op's).
void check(const ir::Gemm& op, const SourceLoc& a_loc, const SourceLoc& b_loc, const SourceLoc& c_loc);

// The op as element loops: c[i, j] (+)= sum over k of a[i, k] * b[k, j], one thread an (i, j) when threaded.
ir::Stmt lower(const ir::Gemm& op, const ir::Stmt& self, Lowering& l);

}  // namespace tilec::op

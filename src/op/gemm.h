// T.gemm (ir::Gemm): c (+)= op(a) @ op(b) over 2-D tiles.
#pragma once

#include "op/op.h"

namespace tilec::op {

// Without clear_accum the product is added to what c held: c is read too.
Regions regions(const ir::Gemm& op);

}  // namespace tilec::op

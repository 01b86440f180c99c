// T.gemv (ir::Gemv): y (+)= a @ x, a a 2-D tile, x and y 1-D.
#pragma once

#include "op/op.h"

namespace tilec::op {

// With accumulate the product is added to what y held: y is read too.
Regions regions(const ir::Gemv& op);

}  // namespace tilec::op

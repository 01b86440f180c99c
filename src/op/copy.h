// T.copy (ir::Copy): dst = src elementwise over two regions of the same tile shape.
#pragma once

#include "op/op.h"

namespace tilec::op {

Regions regions(const ir::Copy& op);

}  // namespace tilec::op

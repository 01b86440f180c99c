// T.fill and T.clear (ir::Fill): every element of a region set to one value.
#pragma once

#include "op/op.h"

namespace tilec::op {

Regions regions(const ir::Fill& op);

}  // namespace tilec::op

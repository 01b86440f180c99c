// T.fill and T.clear (ir::Fill): every element of a region set to one value.
#pragma once

#include "op/op.h"

namespace tilec::op {

Regions regions(const ir::Fill& op);

// One site over dst's tile.
LayoutConstraints layout_constraints(const ir::Fill& op);

// The op as element loops: every element of dst, where it is inside its buffer, set to the value.
ir::Stmt lower(const ir::Fill& op, const ir::Stmt& self, Lowering& l);

}  // namespace tilec::op

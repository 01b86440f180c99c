// T.atomic_add (ir::AtomicAdd): dst += src elementwise and atomically, or dst += a scalar.
#pragma once

#include "op/op.h"

namespace tilec::op {

// An add reads dst as well as writing it. The scalar form's value is an expression: its
// loads are reads of the statement (op/accesses.h), not regions of the op.
Regions regions(const ir::AtomicAdd& op);

// The tile form: one site over the tile, as a copy; the scalar form: none (its value's loads
// are outside any site).
LayoutConstraints layout_constraints(const ir::AtomicAdd& op);

// That the tile form's src has dst's tile, and dst can be added to (not bool); the errors are
// at dst's location.
void check(const ir::AtomicAdd& op, const SourceLoc& dst_loc);

// The op as element loops: one scalar atomic add per element (the scalar form guarded by its bounds).
ir::Stmt lower(const ir::AtomicAdd& op, const ir::Stmt& self, Lowering& l);

}  // namespace tilec::op

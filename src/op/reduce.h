// T.reduce_sum/max/min/abssum/absmax (ir::Reduce): dst = reduce(src) over one dim.
#pragma once

#include "op/op.h"

namespace tilec::op {

// Without clear the reduction is combined with what dst held: dst is read too.
Regions regions(const ir::Reduce& op);

// A fragment source: dst takes src's layout without the reduced dim (and must be a fragment
// too). Otherwise one site over dst's tile.
LayoutConstraints layout_constraints(const ir::Reduce& op);

// `dim` (Python's: negative counts from the end) as an index into op.src's dims; an error at
// `dim_loc` when src has no such dim.
int normalized_dim(const ir::Reduce& op, int64_t dim, const SourceLoc& dim_loc);

// That dst has src's tile without the reduced dim; the error is at dst's location.
void check(const ir::Reduce& op, const SourceLoc& dst_loc);

// The op as element loops: each element of dst the combination of its row of src, with dst's old value unless clear.
ir::Stmt lower(const ir::Reduce& op, const ir::Stmt& self, Lowering& l);

}  // namespace tilec::op

// T.cumsum (ir::CumSum): the inclusive prefix sum of a tile along one dim, in place or into
// another tile of the same shape.
#pragma once

#include "op/op.h"

namespace tilec::op {

// In place (dst is src) the op reads and writes the one region.
Regions regions(const ir::CumSum& op);

// Each line along the scanned dim on one thread: one site over the tile without that dim,
// each thread holding whole lines of the fragments (a scan of a single line: every thread
// holds it all).
LayoutConstraints layout_constraints(const ir::CumSum& op);

// That src and dst are shared or fragment tiles of one shape and one dtype (not bool); each
// error at its operand's location.
void check(const ir::CumSum& op, const SourceLoc& src_loc, const SourceLoc& dst_loc);

// The op as element loops: along each line of the scanned dim, dst's element is src's plus
// the one before it in dst (the sum in dst's dtype, as TileLang's). One T.Parallel element is
// one line when threaded, so a thread scans a whole line.
ir::Stmt lower(const ir::CumSum& op, const ir::Stmt& self, Lowering& l);

}  // namespace tilec::op

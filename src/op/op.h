// A tile op (T.copy, T.gemm, ...) as a unit: each op kind of TILEC_FOR_EACH_TILE_OP (ir/ir.h)
// has its file here, op/<op>.{h,cc}, that says what the op means independently of any
// target. This header is what every unit provides, and the dispatch over the kinds.
//
// Lowering (`lower`): the op as loops of element loads and stores, for every target; the
// loops are T.Parallel ones where a GPU target spreads them over its threads (op/lowering.h).
// A target that runs an op some other way (tensor cores, warp shuffles) lowers it itself.
//
// Regions: what an op reads and writes, over all of a block's threads. A read-modify-write
// (a gemm that accumulates, a reduction combined with what its destination held) lists its
// destination among the reads too. Barriers, shared-memory liveness, warp specialization and
// the runtime's check that outputs are writable take every op's accesses from here
// (op/accesses.h), so a new op gets its barriers by saying what it touches.
//
// Layout constraints: what an op needs of the layouts of the fragments it touches on a GPU
// target (op/layout_constraints.h); layout inference takes them from here, so a new op's
// fragments are laid out to fit it without the pass changing.
#pragma once

#include <vector>

#include "ir/ir.h"
#include "op/layout_constraints.h"

namespace tilec::op {

class Lowering;  // op/lowering.h

struct Regions {
  std::vector<ir::BufferRegion> reads, writes;
};

bool is_tile_op(ir::StmtKind kind);

// The regions of `op`, a tile op (is_tile_op), as its unit gives them. Each unit defines
// `Regions regions(const ir::<Op>&)`; the dispatch calls it by the op's own type, so a tile
// op kind without one does not compile.
Regions regions_of(const ir::StmtNode& op);

// The layout constraints of `op` (a tile op), by its unit's
// `LayoutConstraints layout_constraints(const ir::<Op>&)`.
LayoutConstraints layout_constraints_of(const ir::StmtNode& op);

// `op` (a tile op) lowered by its unit's `ir::Stmt lower(const ir::<Op>&, const ir::Stmt& self,
// Lowering&)`.
ir::Stmt lower_of(const ir::Stmt& op, Lowering& l);

}  // namespace tilec::op

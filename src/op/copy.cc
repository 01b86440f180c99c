#include "op/copy.h"

#include "ir/device_calls.h"
#include "ir/simplify.h"
#include "op/check.h"
#include "op/lowering.h"

namespace tilec::op {

using ir::Expr;
using ir::Stmt;

Regions regions(const ir::Copy& op) { return {{op.src}, {op.dst}}; }

LayoutConstraints layout_constraints(const ir::Copy& op) { return tile_constraints(op.dst, {op.src, op.dst}, op.loc); }

void check(const ir::Copy& op, const SourceLoc& src_loc) {
  check_same_tile(op.src, src_loc, op.dst, "T.copy", "source", "destination");
}

namespace {

Expr tile_bytes(const ir::BufferRegion& tile) {
  Expr bytes = ir::make_int(tile.buffer->dtype.bytes());
  for (const ir::Range& r : tile.region) bytes = ir::make_Mul(bytes, ir::make_cast(DType::Int32, r.extent));
  return ir::simplify(bytes);
}

}  // namespace

// As loops of loads and stores. A load T.tma_copy issued (one with a barrier: the CPU's, the
// copy's elements all moved when it returns) then counts its bytes on the barrier; a multicast
// one stores into, and counts on, each masked block's copies.
Stmt lower(const ir::Copy& op, const Stmt&, Lowering& l) {
  std::vector<Expr> vars = l.loop_vars(op.dst, "i");
  Lowering::Access src = l.access(op.src, vars), dst = l.access(op.dst, vars);
  Expr value = ir::make_cast(op.dst.buffer->dtype, ir::make_load(op.src.buffer, src.indices));
  auto stored = [&](const Expr& v, const Expr& rank) {
    return rank ? ir::device_call("store_to_block", {ir::address_of(op.dst.buffer, dst.indices), rank, v}, op.loc)
                : ir::make_store(op.dst.buffer, dst.indices, v);
  };
  auto copy_into = [&](const Expr& rank) {
    Stmt store = stored(value, rank);
    if (src.in_bounds) store = ir::make_if(src.in_bounds, store, stored(l.zero_of(op.dst.buffer->dtype), rank));
    if (dst.in_bounds) store = ir::make_if(dst.in_bounds, store);
    return l.located(l.nest(vars, ir::squeezed_extents(op.dst), store, Lowering::innermost_kind(src, dst)), op.loc);
  };
  if (!op.barrier) return copy_into(Expr());
  if (!op.multicast)
    return ir::make_seq({copy_into(Expr()), ir::device_call("mbarrier_complete_tx", {op.barrier, tile_bytes(op.dst)},
                                                            op.loc)});
  std::vector<Stmt> copies;
  for (int r : ir::ranks_in_mask(op.multicast)) {
    copies.push_back(copy_into(ir::make_int(r)));
    copies.push_back(ir::device_call("mbarrier_complete_tx_in_block", {op.barrier, ir::make_int(r), tile_bytes(op.dst)},
                                     op.loc));
  }
  return ir::make_seq(copies);
}

}  // namespace tilec::op

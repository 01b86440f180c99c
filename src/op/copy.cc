#include "op/copy.h"

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

Stmt lower(const ir::Copy& op, const Stmt&, Lowering& l) {
  std::vector<Expr> vars = l.loop_vars(op.dst, "i");
  Lowering::Access src = l.access(op.src, vars), dst = l.access(op.dst, vars);
  Expr value = ir::make_cast(op.dst.buffer->dtype, ir::make_load(op.src.buffer, src.indices));
  Stmt store = ir::make_store(op.dst.buffer, dst.indices, value);
  if (src.in_bounds) {
    Stmt zero = ir::make_store(op.dst.buffer, dst.indices, l.zero_of(op.dst.buffer->dtype));
    store = ir::make_if(src.in_bounds, store, zero);
  }
  if (dst.in_bounds) store = ir::make_if(dst.in_bounds, store);
  return l.located(l.nest(vars, ir::squeezed_extents(op.dst), store, Lowering::innermost_kind(src, dst)), op.loc);
}

}  // namespace tilec::op

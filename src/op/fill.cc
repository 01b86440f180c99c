#include "op/fill.h"

#include "op/lowering.h"

namespace tilec::op {

using ir::Expr;
using ir::Stmt;

Regions regions(const ir::Fill& op) { return {{}, {op.dst}}; }

LayoutConstraints layout_constraints(const ir::Fill& op) { return tile_constraints(op.dst, {op.dst}, op.loc); }

Stmt lower(const ir::Fill& op, const Stmt&, Lowering& l) {
  std::vector<Expr> vars = l.loop_vars(op.dst, "i");
  Lowering::Access dst = l.access(op.dst, vars);
  Stmt store = ir::make_store(op.dst.buffer, dst.indices, op.value);
  if (dst.in_bounds) store = ir::make_if(dst.in_bounds, store);
  return l.located(l.nest(vars, ir::squeezed_extents(op.dst), store, Lowering::innermost_kind(dst)), op.loc);
}

}  // namespace tilec::op

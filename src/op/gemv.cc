#include "op/gemv.h"

#include "ir/region.h"
#include "op/check.h"
#include "op/lowering.h"

namespace tilec::op {

using ir::Expr;
using ir::Stmt;

Regions regions(const ir::Gemv& op) {
  Regions r{{op.a, op.x}, {op.y}};
  if (op.accumulate) r.reads.push_back(op.y);
  return r;
}

LayoutConstraints layout_constraints(const ir::Gemv& op) {
  auto ey = const_extents(ir::squeezed_extents(op.y));
  if (ey.size() != 1) return replicated({op.a.buffer, op.x.buffer, op.y.buffer}, op.loc);
  Site site{ey, {tile_access(op.y, {0}), tile_access(op.a, {0, -1}), tile_access(op.x, {-1})}, op.loc};
  return {{site}, {}, {}};
}

void check(const ir::Gemv& op, const SourceLoc& a_loc, const SourceLoc& x_loc, const SourceLoc& y_loc) {
  require_tile_dims(op.a, a_loc, "T.gemv", "A", 2);
  require_tile_dims(op.x, x_loc, "T.gemv", "x", 1);
  require_tile_dims(op.y, y_loc, "T.gemv", "y", 1);
  auto ea = ir::tile_extents(op.a, 2), ex = ir::tile_extents(op.x, 1), ey = ir::tile_extents(op.y, 1);
  check_dim(ea[1], ex[0], x_loc, "T.gemv: x's length differs from A's columns");
  check_dim(ea[0], ey[0], y_loc, "T.gemv: y's length differs from A's rows");
}

Stmt lower(const ir::Gemv& op, const Stmt&, Lowering& l) {
  auto ea = ir::tile_extents(op.a, 2);
  Expr n = ir::make_var("n"), k = ir::make_var("k");
  DType acc = op.y.buffer->dtype;
  Lowering::Access y = l.access_tile(op.y, {n}, 1);
  Lowering::Access a = l.access_2d(op.a, n, k);
  Lowering::Access x = l.access_tile(op.x, {k}, 1);
  Expr product = ir::make_Mul(l.guarded_load(op.a.buffer, a, acc), l.guarded_load(op.x.buffer, x, acc));
  Stmt update = ir::make_store(op.y.buffer, y.indices,
                               ir::make_Add(ir::make_load(op.y.buffer, y.indices), product));
  Stmt body = ir::make_for(k, ir::make_int(0), ea[1], ir::ForKind::Serial, update);
  if (!op.accumulate)
    body = ir::make_seq({ir::make_store(op.y.buffer, y.indices, l.zero_of(acc)), body});
  if (y.in_bounds) body = ir::make_if(y.in_bounds, body);
  return l.located(l.nest({n}, {ea[0]}, body, ir::ForKind::Serial), op.loc);
}

}  // namespace tilec::op

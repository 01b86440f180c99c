#include "op/gemv.h"

#include "op/check.h"

namespace tilec::op {

Regions regions(const ir::Gemv& op) {
  Regions r{{op.a, op.x}, {op.y}};
  if (op.accumulate) r.reads.push_back(op.y);
  return r;
}

void check(const ir::Gemv& op, const SourceLoc& a_loc, const SourceLoc& x_loc, const SourceLoc& y_loc) {
  require_tile_dims(op.a, a_loc, "T.gemv", "A", 2);
  require_tile_dims(op.x, x_loc, "T.gemv", "x", 1);
  require_tile_dims(op.y, y_loc, "T.gemv", "y", 1);
  auto ea = tile_extents(op.a, 2), ex = tile_extents(op.x, 1), ey = tile_extents(op.y, 1);
  check_dim(ea[1], ex[0], x_loc, "T.gemv: x's length differs from A's columns");
  check_dim(ea[0], ey[0], y_loc, "T.gemv: y's length differs from A's rows");
}

}  // namespace tilec::op

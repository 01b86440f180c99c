#include "op/atomic_add.h"

#include "op/check.h"
#include "op/lowering.h"

namespace tilec::op {

using ir::Expr;
using ir::Stmt;

Regions regions(const ir::AtomicAdd& op) {
  Regions r{{op.dst}, {op.dst}};
  if (op.src.buffer) r.reads.insert(r.reads.begin(), op.src);
  return r;
}

LayoutConstraints layout_constraints(const ir::AtomicAdd& op) {
  if (!op.src.buffer) return {};
  return tile_constraints(op.dst, {op.src, op.dst}, op.loc);
}

void check(const ir::AtomicAdd& op, const SourceLoc& dst_loc) {
  if (op.src.buffer) check_same_tile(op.dst, dst_loc, op.src, "T.atomic_add", "destination", "value");
  if (op.dst.buffer->dtype.is_bool()) error_at(dst_loc, "T.atomic_add: bool buffers cannot be added to");
}

Stmt lower(const ir::AtomicAdd& op, const Stmt& self, Lowering& l) {
  if (!op.src.buffer) {
    Lowering::Access dst = l.access(op.dst, {});
    if (!dst.in_bounds) return self;
    return l.located(ir::make_if(dst.in_bounds, self), op.loc);
  }
  std::vector<Expr> vars = l.loop_vars(op.dst, "i");
  Lowering::Access src = l.access(op.src, vars), dst = l.access(op.dst, vars);
  auto scalar = std::make_shared<ir::AtomicAdd>();
  scalar->dst.buffer = op.dst.buffer;
  for (const auto& idx : dst.indices) scalar->dst.region.push_back({idx, ir::make_int(1)});
  scalar->value = l.guarded_load(op.src.buffer, src, op.dst.buffer->dtype);
  scalar->loc = op.loc;
  Stmt body(scalar);
  if (dst.in_bounds) body = ir::make_if(dst.in_bounds, body);
  return l.located(l.nest(vars, ir::squeezed_extents(op.dst), body, ir::ForKind::Serial), op.loc);
}

}  // namespace tilec::op

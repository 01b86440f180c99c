#include "op/parallel.h"

#include <algorithm>

#include "ir/simplify.h"

namespace tilec::op {

using ir::Stmt;

std::optional<ParallelNest> parallel_nest(const Stmt& s) {
  const auto* loop = s.as<ir::For>();
  if (!loop || loop->for_kind != ir::ForKind::Parallel) return std::nullopt;
  ParallelNest nest;
  nest.loc = loop->loc;
  Stmt cur = s;
  while (const auto* f = cur.as<ir::For>()) {
    if (f->for_kind != ir::ForKind::Parallel) break;
    int64_t extent;
    if (!ir::is_zero(ir::simplify(f->min)) || !ir::is_const_int(ir::simplify(f->extent), &extent))
      return std::nullopt;
    nest.vars.push_back(f->var);
    nest.extents.push_back(extent);
    cur = f->body;
  }
  nest.body = cur;
  return nest;
}

LayoutConstraints layout_constraints(const ParallelNest& nest) {
  NestAccesses acc(nest.vars);
  acc.visit(nest.body);
  return {{Site{nest.extents, acc.accesses, nest.loc}}, {}, {}};
}

ir::Fragment nest_layout(const ParallelNest& nest, int threads) {
  auto layout = site_layout(layout_constraints(nest).sites[0], [](const ir::Buffer& b) { return b->fragment.get(); });
  if (layout) return *layout;
  struct Widest : ir::IRVisitor {
    int64_t bytes = 1;
    void visit_BufferLoad(const ir::BufferLoad* op) override {
      bytes = std::max<int64_t>(bytes, op->buffer->dtype.bytes());
      IRVisitor::visit_BufferLoad(op);
    }
    void visit_BufferStore(const ir::BufferStore* op) override {
      bytes = std::max<int64_t>(bytes, op->buffer->dtype.bytes());
      IRVisitor::visit_BufferStore(op);
    }
  } widest;
  widest.visit(nest.body);
  return ir::default_fragment(nest.extents, threads, default_run(nest.extents, threads, widest.bytes));
}

}  // namespace tilec::op

#include "op/parallel.h"

#include <algorithm>

#include "ir/intrinsics.h"
#include "ir/simplify.h"
#include "ir/substitute.h"
#include "ir/visitor.h"

namespace tilec::op {

using ir::Stmt;

namespace {

// Whether e may be evaluated where it is used instead of where it was named: no call but the
// math intrinsics and reinterpret (an atomic's result, a device query, are made once).
bool is_pure(const ir::Expr& e) {
  struct Finder : ir::IRVisitor {
    bool impure = false;
    void visit_Call(const ir::Call* op) override {
      if (!ir::find_intrinsic(op->name) && op->name != ir::kReinterpret) impure = true;
      IRVisitor::visit_Call(op);
    }
  } finder;
  finder.visit(e);
  return !finder.impure;
}

}  // namespace

Stmt inline_pure_lets(const Stmt& body) {
  ir::VarMap values;
  Stmt cur = body;
  while (const auto* let = cur.as<ir::LetStmt>()) {
    if (!is_pure(let->value)) return body;
    values[let->var.get()] = ir::substitute(let->value, values);
    cur = let->body;
  }
  if (values.empty()) return body;
  const auto* guarded = cur.as<ir::IfThenElse>();
  const bool one_store = cur.as<ir::BufferStore>() ||
                         (guarded && !guarded->else_case && guarded->then_case.as<ir::BufferStore>());
  return one_store ? ir::substitute(cur, values) : body;
}

std::optional<ParallelNest> parallel_nest(const Stmt& s) {
  const auto* loop = s.as<ir::For>();
  if (!loop || loop->for_kind != ir::ForKind::Parallel) return std::nullopt;
  ParallelNest nest;
  nest.loc = loop->loc;
  nest.async_fill = loop->async_fill;
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
  // The run fits 16 bytes of the widest element that moves along the last dim; an access that
  // doesn't (a gather's row index, read once a row) leaves the run alone.
  struct Widest : ir::IRVisitor {
    const ir::ExprNode* last_var;
    int64_t bytes = 1;
    void widen(const ir::Buffer& b, const std::vector<ir::Expr>& indices) {
      for (const ir::Expr& i : indices)
        if (ir::uses_var(i, last_var)) bytes = std::max<int64_t>(bytes, b->dtype.bytes());
    }
    void visit_BufferLoad(const ir::BufferLoad* op) override {
      widen(op->buffer, op->indices);
      IRVisitor::visit_BufferLoad(op);
    }
    void visit_BufferStore(const ir::BufferStore* op) override {
      widen(op->buffer, op->indices);
      IRVisitor::visit_BufferStore(op);
    }
  } widest;
  widest.last_var = nest.vars.back().get();
  widest.visit(nest.body);
  return ir::default_fragment(nest.extents, threads, default_run(nest.extents, threads, widest.bytes));
}

}  // namespace tilec::op

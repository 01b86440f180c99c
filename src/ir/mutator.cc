#include "ir/mutator.h"

#include "base/stack_guard.h"

namespace tilec::ir {

namespace {

// Mutates every expression of `in` into `out`; true when any of them changed.
bool mutate_exprs(IRMutator& m, const std::vector<Expr>& in, std::vector<Expr>* out) {
  bool changed = false;
  out->reserve(in.size());
  for (const Expr& e : in) {
    out->push_back(m.mutate(e));
    changed |= !out->back().same_as(e);
  }
  return changed;
}

bool same_region(const BufferRegion& a, const BufferRegion& b) {
  if (a.buffer != b.buffer || a.region.size() != b.region.size()) return false;
  for (size_t i = 0; i < a.region.size(); ++i) {
    if (!a.region[i].min.same_as(b.region[i].min) ||
        !a.region[i].extent.same_as(b.region[i].extent))
      return false;
  }
  return true;
}

template <typename Node>
Expr mutate_binary(IRMutator& m, const Node* op, const Expr& self) {
  Expr a = m.mutate(op->a);
  Expr b = m.mutate(op->b);
  if (a.same_as(op->a) && b.same_as(op->b)) return self;
  return with_loc(make_binary(Node::static_kind, std::move(a), std::move(b)), op->loc);
}

}  // namespace

Expr IRMutator::mutate(const Expr& e) {
  if (!e) return e;
  check_stack(e->loc);
  switch (e.kind()) {
#define TILEC_DISPATCH(n) \
  case ExprKind::n: return mutate_##n(static_cast<const n*>(e.get()), e);
    TILEC_FOR_EACH_EXPR(TILEC_DISPATCH)
#undef TILEC_DISPATCH
  }
  return e;
}

Stmt IRMutator::mutate(const Stmt& s) {
  if (!s) return s;
  check_stack(s->loc);
  switch (s.kind()) {
#define TILEC_DISPATCH(n) \
  case StmtKind::n: return mutate_##n(static_cast<const n*>(s.get()), s);
    TILEC_FOR_EACH_STMT(TILEC_DISPATCH)
#undef TILEC_DISPATCH
  }
  return s;
}

BufferRegion IRMutator::mutate_region(const BufferRegion& region) {
  BufferRegion out{region.buffer, {}};
  out.region.reserve(region.region.size());
  for (const Range& r : region.region) out.region.push_back({mutate(r.min), mutate(r.extent)});
  return out;
}

Expr IRMutator::mutate_IntImm(const IntImm*, const Expr& self) { return self; }
Expr IRMutator::mutate_FloatImm(const FloatImm*, const Expr& self) { return self; }
Expr IRMutator::mutate_Var(const Var*, const Expr& self) { return self; }

#define TILEC_MUTATE_BINARY(n)                                \
  Expr IRMutator::mutate_##n(const n* op, const Expr& self) { \
    return mutate_binary(*this, op, self);                    \
  }
TILEC_FOR_EACH_BINARY_EXPR(TILEC_MUTATE_BINARY)
#undef TILEC_MUTATE_BINARY

Expr IRMutator::mutate_Not(const Not* op, const Expr& self) {
  Expr a = mutate(op->a);
  if (a.same_as(op->a)) return self;
  auto n = std::make_shared<Not>(*op);
  n->a = std::move(a);
  return Expr(n);
}

Expr IRMutator::mutate_Select(const Select* op, const Expr& self) {
  Expr c = mutate(op->condition);
  Expr t = mutate(op->true_value);
  Expr f = mutate(op->false_value);
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value))
    return self;
  auto n = std::make_shared<Select>(*op);
  n->dtype = t->dtype;
  n->condition = std::move(c);
  n->true_value = std::move(t);
  n->false_value = std::move(f);
  return Expr(n);
}

Expr IRMutator::mutate_Cast(const Cast* op, const Expr& self) {
  Expr v = mutate(op->value);
  if (v.same_as(op->value)) return self;
  auto n = std::make_shared<Cast>(*op);
  n->value = std::move(v);
  return Expr(n);
}

Expr IRMutator::mutate_Call(const Call* op, const Expr& self) {
  std::vector<Expr> args;
  if (!mutate_exprs(*this, op->args, &args)) return self;
  auto n = std::make_shared<Call>(*op);
  n->args = std::move(args);
  return Expr(n);
}

Expr IRMutator::mutate_BufferLoad(const BufferLoad* op, const Expr& self) {
  std::vector<Expr> indices;
  if (!mutate_exprs(*this, op->indices, &indices)) return self;
  auto n = std::make_shared<BufferLoad>(*op);
  n->indices = std::move(indices);
  return Expr(n);
}

Stmt IRMutator::mutate_BufferStore(const BufferStore* op, const Stmt& self) {
  std::vector<Expr> indices;
  bool changed = mutate_exprs(*this, op->indices, &indices);
  Expr value = mutate(op->value);
  if (!changed && value.same_as(op->value)) return self;
  auto n = std::make_shared<BufferStore>(*op);
  n->indices = std::move(indices);
  n->value = std::move(value);
  return Stmt(n);
}

Stmt IRMutator::mutate_For(const For* op, const Stmt& self) {
  Expr var = mutate(op->var);
  Expr min = mutate(op->min);
  Expr extent = mutate(op->extent);
  Stmt body = mutate(op->body);
  if (var.same_as(op->var) && min.same_as(op->min) && extent.same_as(op->extent) &&
      body.same_as(op->body))
    return self;
  auto n = std::make_shared<For>(*op);
  n->var = std::move(var);
  n->min = std::move(min);
  n->extent = std::move(extent);
  n->body = std::move(body);
  return Stmt(n);
}

Stmt IRMutator::mutate_While(const While* op, const Stmt& self) {
  Expr condition = mutate(op->condition);
  Stmt body = mutate(op->body);
  if (condition.same_as(op->condition) && body.same_as(op->body)) return self;
  auto n = std::make_shared<While>(*op);
  n->condition = std::move(condition);
  n->body = std::move(body);
  return Stmt(n);
}

Stmt IRMutator::mutate_IfThenElse(const IfThenElse* op, const Stmt& self) {
  Expr condition = mutate(op->condition);
  Stmt then_case = mutate(op->then_case);
  Stmt else_case = mutate(op->else_case);
  if (condition.same_as(op->condition) && then_case.same_as(op->then_case) &&
      else_case.same_as(op->else_case))
    return self;
  auto n = std::make_shared<IfThenElse>(*op);
  n->condition = std::move(condition);
  n->then_case = std::move(then_case);
  n->else_case = std::move(else_case);
  return Stmt(n);
}

Stmt IRMutator::mutate_Seq(const Seq* op, const Stmt& self) {
  std::vector<Stmt> stmts;
  stmts.reserve(op->stmts.size());
  bool changed = false;
  for (const Stmt& s : op->stmts) {
    stmts.push_back(mutate(s));
    changed |= !stmts.back().same_as(s);
  }
  if (!changed) return self;
  auto n = std::make_shared<Seq>(*op);
  n->stmts = std::move(stmts);
  return Stmt(n);
}

Stmt IRMutator::mutate_LetStmt(const LetStmt* op, const Stmt& self) {
  Expr var = mutate(op->var);
  Expr value = mutate(op->value);
  Stmt body = mutate(op->body);
  if (var.same_as(op->var) && value.same_as(op->value) && body.same_as(op->body)) return self;
  auto n = std::make_shared<LetStmt>(*op);
  n->var = std::move(var);
  n->value = std::move(value);
  n->body = std::move(body);
  return Stmt(n);
}

Stmt IRMutator::mutate_Allocate(const Allocate* op, const Stmt& self) {
  Stmt body = mutate(op->body);
  if (body.same_as(op->body)) return self;
  auto n = std::make_shared<Allocate>(*op);
  n->body = std::move(body);
  return Stmt(n);
}

Stmt IRMutator::mutate_Evaluate(const Evaluate* op, const Stmt& self) {
  Expr value = mutate(op->value);
  if (value.same_as(op->value)) return self;
  auto n = std::make_shared<Evaluate>(*op);
  n->value = std::move(value);
  return Stmt(n);
}

Stmt IRMutator::mutate_KernelLaunch(const KernelLaunch* op, const Stmt& self) {
  std::vector<Expr> grid, block_vars;
  bool changed = mutate_exprs(*this, op->grid, &grid);
  changed |= mutate_exprs(*this, op->block_vars, &block_vars);
  Stmt body = mutate(op->body);
  if (!changed && body.same_as(op->body)) return self;
  auto n = std::make_shared<KernelLaunch>(*op);
  n->grid = std::move(grid);
  n->block_vars = std::move(block_vars);
  n->body = std::move(body);
  return Stmt(n);
}

Stmt IRMutator::mutate_Copy(const Copy* op, const Stmt& self) {
  BufferRegion src = mutate_region(op->src);
  BufferRegion dst = mutate_region(op->dst);
  Expr barrier = op->barrier ? mutate(op->barrier) : op->barrier;
  if (same_region(src, op->src) && same_region(dst, op->dst) && barrier.same_as(op->barrier)) return self;
  auto n = std::make_shared<Copy>(*op);
  n->src = std::move(src);
  n->dst = std::move(dst);
  n->barrier = std::move(barrier);
  return Stmt(n);
}

Stmt IRMutator::mutate_Gemm(const Gemm* op, const Stmt& self) {
  BufferRegion a = mutate_region(op->a);
  BufferRegion b = mutate_region(op->b);
  BufferRegion c = mutate_region(op->c);
  if (same_region(a, op->a) && same_region(b, op->b) && same_region(c, op->c)) return self;
  auto n = std::make_shared<Gemm>(*op);
  n->a = std::move(a);
  n->b = std::move(b);
  n->c = std::move(c);
  return Stmt(n);
}

Stmt IRMutator::mutate_Gemv(const Gemv* op, const Stmt& self) {
  BufferRegion a = mutate_region(op->a);
  BufferRegion x = mutate_region(op->x);
  BufferRegion y = mutate_region(op->y);
  if (same_region(a, op->a) && same_region(x, op->x) && same_region(y, op->y)) return self;
  auto n = std::make_shared<Gemv>(*op);
  n->a = std::move(a);
  n->x = std::move(x);
  n->y = std::move(y);
  return Stmt(n);
}

Stmt IRMutator::mutate_Fill(const Fill* op, const Stmt& self) {
  BufferRegion dst = mutate_region(op->dst);
  Expr value = mutate(op->value);
  if (same_region(dst, op->dst) && value.same_as(op->value)) return self;
  auto n = std::make_shared<Fill>(*op);
  n->dst = std::move(dst);
  n->value = std::move(value);
  return Stmt(n);
}

Stmt IRMutator::mutate_Reduce(const Reduce* op, const Stmt& self) {
  BufferRegion src = mutate_region(op->src);
  BufferRegion dst = mutate_region(op->dst);
  if (same_region(src, op->src) && same_region(dst, op->dst)) return self;
  auto n = std::make_shared<Reduce>(*op);
  n->src = std::move(src);
  n->dst = std::move(dst);
  return Stmt(n);
}

Stmt IRMutator::mutate_CumSum(const CumSum* op, const Stmt& self) {
  BufferRegion src = mutate_region(op->src);
  BufferRegion dst = mutate_region(op->dst);
  if (same_region(src, op->src) && same_region(dst, op->dst)) return self;
  auto n = std::make_shared<CumSum>(*op);
  n->src = std::move(src);
  n->dst = std::move(dst);
  return Stmt(n);
}

Stmt IRMutator::mutate_AtomicAdd(const AtomicAdd* op, const Stmt& self) {
  BufferRegion dst = mutate_region(op->dst);
  BufferRegion src = mutate_region(op->src);
  Expr value = mutate(op->value);
  BufferRegion prev = op->prev.buffer ? mutate_region(op->prev) : op->prev;
  if (same_region(dst, op->dst) && same_region(src, op->src) && value.same_as(op->value) &&
      same_region(prev, op->prev))
    return self;
  auto n = std::make_shared<AtomicAdd>(*op);
  n->dst = std::move(dst);
  n->src = std::move(src);
  n->value = std::move(value);
  n->prev = std::move(prev);
  return Stmt(n);
}

}  // namespace tilec::ir

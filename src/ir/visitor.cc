#include "ir/visitor.h"

#include "base/stack_guard.h"

namespace tilec::ir {

void IRVisitor::visit(const Expr& e) {
  if (!e) return;
  check_stack(e->loc);
  switch (e.kind()) {
#define TILEC_DISPATCH(n) \
  case ExprKind::n: return visit_##n(static_cast<const n*>(e.get()));
    TILEC_FOR_EACH_EXPR(TILEC_DISPATCH)
#undef TILEC_DISPATCH
  }
}

void IRVisitor::visit(const Stmt& s) {
  if (!s) return;
  check_stack(s->loc);
  switch (s.kind()) {
#define TILEC_DISPATCH(n) \
  case StmtKind::n: return visit_##n(static_cast<const n*>(s.get()));
    TILEC_FOR_EACH_STMT(TILEC_DISPATCH)
#undef TILEC_DISPATCH
  }
}

void IRVisitor::visit_region(const BufferRegion& region) {
  for (const Range& r : region.region) {
    visit(r.min);
    visit(r.extent);
  }
}

void IRVisitor::visit_IntImm(const IntImm*) {}
void IRVisitor::visit_FloatImm(const FloatImm*) {}
void IRVisitor::visit_Var(const Var*) {}

#define TILEC_VISIT_BINARY(n)              \
  void IRVisitor::visit_##n(const n* op) { \
    visit(op->a);                          \
    visit(op->b);                          \
  }
TILEC_FOR_EACH_BINARY_EXPR(TILEC_VISIT_BINARY)
#undef TILEC_VISIT_BINARY

void IRVisitor::visit_Not(const Not* op) { visit(op->a); }

void IRVisitor::visit_Select(const Select* op) {
  visit(op->condition);
  visit(op->true_value);
  visit(op->false_value);
}

void IRVisitor::visit_Cast(const Cast* op) { visit(op->value); }

void IRVisitor::visit_Call(const Call* op) {
  for (const Expr& arg : op->args) visit(arg);
}

void IRVisitor::visit_BufferLoad(const BufferLoad* op) {
  for (const Expr& index : op->indices) visit(index);
}

void IRVisitor::visit_BufferStore(const BufferStore* op) {
  for (const Expr& index : op->indices) visit(index);
  visit(op->value);
}

void IRVisitor::visit_For(const For* op) {
  visit(op->var);
  visit(op->min);
  visit(op->extent);
  visit(op->body);
}

void IRVisitor::visit_While(const While* op) {
  visit(op->condition);
  visit(op->body);
}

void IRVisitor::visit_IfThenElse(const IfThenElse* op) {
  visit(op->condition);
  visit(op->then_case);
  visit(op->else_case);
}

void IRVisitor::visit_Seq(const Seq* op) {
  for (const Stmt& s : op->stmts) visit(s);
}

void IRVisitor::visit_LetStmt(const LetStmt* op) {
  visit(op->var);
  visit(op->value);
  visit(op->body);
}

void IRVisitor::visit_Allocate(const Allocate* op) { visit(op->body); }

void IRVisitor::visit_Evaluate(const Evaluate* op) { visit(op->value); }

void IRVisitor::visit_KernelLaunch(const KernelLaunch* op) {
  for (const Expr& g : op->grid) visit(g);
  for (const Expr& v : op->block_vars) visit(v);
  visit(op->body);
}

void IRVisitor::visit_Copy(const Copy* op) {
  visit_region(op->src);
  visit_region(op->dst);
  if (op->barrier) visit(op->barrier);
}

void IRVisitor::visit_Gemm(const Gemm* op) {
  visit_region(op->a);
  visit_region(op->b);
  visit_region(op->c);
}

void IRVisitor::visit_Gemv(const Gemv* op) {
  visit_region(op->a);
  visit_region(op->x);
  visit_region(op->y);
}

void IRVisitor::visit_Fill(const Fill* op) {
  visit_region(op->dst);
  visit(op->value);
}

void IRVisitor::visit_Reduce(const Reduce* op) {
  visit_region(op->src);
  visit_region(op->dst);
}

void IRVisitor::visit_CumSum(const CumSum* op) {
  visit_region(op->src);
  visit_region(op->dst);
}

void IRVisitor::visit_AtomicAdd(const AtomicAdd* op) {
  visit_region(op->dst);
  visit_region(op->src);
  visit(op->value);
  if (op->prev.buffer) visit_region(op->prev);
}

bool uses_var(const Expr& e, const ExprNode* var) {
  struct Finder : IRVisitor {
    const ExprNode* var;
    bool found = false;
    void visit(const Expr& x) override {
      if (x.get() == var) found = true;
      if (!found) IRVisitor::visit(x);
    }
  } finder;
  finder.var = var;
  finder.visit(e);
  return finder.found;
}

}  // namespace tilec::ir

// Read-only traversal of the IR: one visit_<Kind> method per node kind, each
// recursing into the node's children by default. Override the kinds you care
// about and call the base method to keep recursing.
#pragma once

#include "ir/ir.h"

namespace tilec::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void visit(const Expr& e);  // dispatches on e's kind; null is ignored
  virtual void visit(const Stmt& s);

 protected:
  // Visits the index expressions of every range (not the buffer's shape).
  virtual void visit_region(const BufferRegion& region);

#define TILEC_VISIT_DECL(n) virtual void visit_##n(const n* op);
  TILEC_FOR_EACH_EXPR(TILEC_VISIT_DECL)
  TILEC_FOR_EACH_STMT(TILEC_VISIT_DECL)
#undef TILEC_VISIT_DECL
};

// An IRVisitor that knows where it is: loc_ is the location of the innermost statement being
// visited that has one (for an error at the user's line).
class LocatedVisitor : public IRVisitor {
 public:
  void visit(const Stmt& s) override {
    SourceLoc enclosing = loc_;
    if (s && s->loc.valid()) loc_ = s->loc;
    IRVisitor::visit(s);
    loc_ = enclosing;
  }
  using IRVisitor::visit;

 protected:
  SourceLoc loc_;
};

// Whether `var` (a Var node) occurs anywhere in e, loads' indices included.
bool uses_var(const Expr& e, const ExprNode* var);

}  // namespace tilec::ir

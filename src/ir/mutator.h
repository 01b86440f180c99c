// Rewriting traversal of the IR. Each mutate_<Kind> gets the node and its
// handle; the default rebuilds the node from its mutated children and returns
// `self` unchanged (the same handle) when no child changed, so a pass that
// changes nothing allocates nothing and the log can say "(unchanged)".
#pragma once

#include "ir/ir.h"

namespace tilec::ir {

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Expr mutate(const Expr& e);  // dispatches on e's kind; null stays null
  virtual Stmt mutate(const Stmt& s);

 protected:
  // Mutates the region's index expressions (min and extent of every range);
  // the buffer is kept.
  virtual BufferRegion mutate_region(const BufferRegion& region);

#define TILEC_MUTATE_EXPR_DECL(n) virtual Expr mutate_##n(const n* op, const Expr& self);
#define TILEC_MUTATE_STMT_DECL(n) virtual Stmt mutate_##n(const n* op, const Stmt& self);
  TILEC_FOR_EACH_EXPR(TILEC_MUTATE_EXPR_DECL)
  TILEC_FOR_EACH_STMT(TILEC_MUTATE_STMT_DECL)
#undef TILEC_MUTATE_EXPR_DECL
#undef TILEC_MUTATE_STMT_DECL
};

}  // namespace tilec::ir

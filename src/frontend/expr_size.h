// Holds the runtime expressions the elaborator builds to kMaxExprIRDepth levels
// and kMaxExprIRNodes nodes (frontend/limits.h). Source nesting is bounded by
// the parser, but values flow through names, tuples and calls into larger
// expressions than any one line spells, and every pass walks them recursively
// and as trees (a subexpression used twice is walked twice).
#pragma once

#include <unordered_map>

#include "base/diagnostics.h"
#include "ir/ir.h"

namespace tilec::frontend {

class ExprSizeCheck {
 public:
  // A located error at `loc` when `e` is too deep or too large. Every
  // expression measured is remembered, so checking one that is built from
  // checked parts costs only its new nodes.
  void check(const ir::Expr& e, const SourceLoc& loc);
  // Whether `e` is within the limits (check without the error).
  bool fits(const ir::Expr& e);

  struct Size {
    int depth = 0;      // levels, a leaf being 1
    int64_t nodes = 0;  // as a tree: a shared subexpression counts at each use
  };
  struct Measured {
    ir::Expr expr;  // keeps the node, and so its address, alive
    Size size;
  };
  using Memo = std::unordered_map<const ir::ExprNode*, Measured>;

 private:
  Memo measured_;
};

}  // namespace tilec::frontend

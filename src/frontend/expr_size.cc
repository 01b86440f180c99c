#include "frontend/expr_size.h"

#include <algorithm>

#include "frontend/limits.h"
#include "ir/visitor.h"

namespace tilec::frontend {
namespace {

[[noreturn]] void too_large(const SourceLoc& loc, const std::string& what) {
  error_at(loc, "this expression is too large to compile: " + what +
                    "; assign parts of it to names inside the kernel (a named value is computed once)");
}

// Sizes of an expression's nodes, children first. Stops (with the error) as
// soon as the walk passes the depth limit, so its own recursion stays bounded.
class Measure : public ir::IRVisitor {
 public:
  using Size = ExprSizeCheck::Size;

  Measure(ExprSizeCheck::Memo& measured, const SourceLoc& loc)
      : measured_(measured), loc_(loc) {}

  Size of(const ir::Expr& e) {
    visit(e);
    return children_;
  }

  void visit(const ir::Expr& e) override {
    if (!e) return;
    Size size;
    auto it = measured_.find(e.get());
    if (it != measured_.end()) {
      size = it->second.size;
    } else {
      if (depth_ >= kMaxExprIRDepth)
        too_large(loc_, "it nests more than " + std::to_string(kMaxExprIRDepth) + " levels deep");
      Size outer = children_;
      children_ = {};
      ++depth_;
      IRVisitor::visit(e);
      --depth_;
      size = {children_.depth + 1, children_.nodes + 1};
      children_ = outer;
      measured_.emplace(e.get(), ExprSizeCheck::Measured{e, size});
    }
    children_.depth = std::max(children_.depth, size.depth);
    children_.nodes = std::min(children_.nodes + size.nodes, kMaxExprIRNodes + 1);
  }

 private:
  ExprSizeCheck::Memo& measured_;
  const SourceLoc& loc_;
  int depth_ = 0;
  Size children_;
};

}  // namespace

void ExprSizeCheck::check(const ir::Expr& e, const SourceLoc& loc) {
  if (!e) return;
  auto it = measured_.find(e.get());
  Size size = it != measured_.end() ? it->second.size : Measure(measured_, loc).of(e);
  if (size.depth > kMaxExprIRDepth)
    too_large(loc, "it nests " + std::to_string(size.depth) + " levels deep (the limit is " +
                       std::to_string(kMaxExprIRDepth) + ")");
  if (size.nodes > kMaxExprIRNodes)
    too_large(loc, "written out, it has more than " + std::to_string(kMaxExprIRNodes) +
                       " operations and operands (each use of a value repeats it)");
}

bool ExprSizeCheck::fits(const ir::Expr& e) {
  try {
    check(e, SourceLoc{});
    return true;
  } catch (const CompileError&) {
    return false;
  }
}

}  // namespace tilec::frontend

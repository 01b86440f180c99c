// T.Parallel nests: a perfect nest of T.Parallel loops seen as one loop over several dims,
// the fragment accesses of its body, and the layout it runs by on a GPU target.
#pragma once

#include <optional>
#include <vector>

#include "ir/layout.h"
#include "ir/simplify.h"
#include "ir/visitor.h"
#include "op/layout_constraints.h"

namespace tilec::op {

// A perfect nest of T.Parallel loops, seen as one loop over several dims.
struct ParallelNest {
  std::vector<ir::Expr> vars;
  std::vector<int64_t> extents;
  ir::Stmt body;
  SourceLoc loc;
  bool async_fill = false;  // the outer loop's (ir::For)
};
// `s` as a nest when it is a T.Parallel loop with constant extents starting at 0.
std::optional<ParallelNest> parallel_nest(const ir::Stmt& s);

// A nest body of lets ending in one store, or one store under an if (a T.Parallel body that
// names a value first: `v = ...; S[i, j] = v * s`), as that store with the values in place of
// their names, when the values are pure (no call but the math intrinsics and reinterpret): the
// single store that vector accesses and pipelining take. Any other body as it is.
ir::Stmt inline_pure_lets(const ir::Stmt& body);

// One site over the nest, with the fragments its body indexes by the nest's vars.
LayoutConstraints layout_constraints(const ParallelNest& nest);

// The layout a nest runs by: the layout of a fragment it touches at the loop's indices
// (extended to the loop's other dims), else the default over the loop.
ir::Fragment nest_layout(const ParallelNest& nest, int threads);

// Fragment loads and stores in a nest body, mapped to the nest's vars.
class NestAccesses : public ir::IRVisitor {
 public:
  explicit NestAccesses(const std::vector<ir::Expr>& vars) : vars_(vars) {}
  std::vector<FragmentAccess> accesses;

 protected:
  void visit_BufferLoad(const ir::BufferLoad* op) override {
    note(op->buffer, op->indices, true);
    IRVisitor::visit_BufferLoad(op);
  }
  void visit_BufferStore(const ir::BufferStore* op) override {
    note(op->buffer, op->indices, false);
    IRVisitor::visit_BufferStore(op);
  }

 private:
  void note(const ir::Buffer& b, const std::vector<ir::Expr>& indices, bool read_only) {
    if (!is_fragment(b)) return;
    FragmentAccess a{b, {}, read_only};
    for (const auto& idx : indices) {
      ir::Expr e = ir::simplify(idx);
      int dim = -1;
      for (size_t k = 0; k < vars_.size(); ++k)
        if (e.same_as(vars_[k])) dim = static_cast<int>(k);
      a.dims.push_back(dim);
    }
    accesses.push_back(a);
  }
  const std::vector<ir::Expr>& vars_;
};

}  // namespace tilec::op

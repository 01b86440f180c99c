// The buffers a statement (or expression) reads and writes, over all of a block's threads:
// its loads and stores, and each tile op's regions as its unit gives them (op/op.h). Used for
// the shared buffers that need barriers and their lifetimes, what warp specialization may
// move between warpgroups (passes/cuda), and the tensors a kernel writes (the runtime's check
// that outputs are writable). An access of a view (T.reshape) is one of the buffer it views.
#pragma once

#include <optional>
#include <unordered_set>

#include "ir/visitor.h"

namespace tilec::op {

using BufferSet = std::unordered_set<const ir::BufferNode*>;

class Accesses : public ir::IRVisitor {
 public:
  // Only buffers of `scope`, or of every scope.
  explicit Accesses(std::optional<ir::MemoryScope> scope = std::nullopt) : scope_(scope) {}

  BufferSet reads, writes;

  using IRVisitor::visit;
  void visit(const ir::Stmt& s) override;

 protected:
  void visit_BufferLoad(const ir::BufferLoad* op) override;
  void visit_BufferStore(const ir::BufferStore* op) override;

 private:
  void note(const ir::Buffer& b, BufferSet* set) const;

  std::optional<ir::MemoryScope> scope_;
};

}  // namespace tilec::op

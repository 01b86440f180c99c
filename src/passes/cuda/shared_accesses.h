// The shared buffers a statement reads and writes, over all of the block's threads (a tile
// op touches its operands from many threads). Used to place barriers and to find the
// lifetimes of shared buffers.
#pragma once

#include <unordered_set>

#include "ir/visitor.h"

namespace tilec::passes {

using BufferSet = std::unordered_set<const ir::BufferNode*>;

class SharedAccesses : public ir::IRVisitor {
 public:
  BufferSet reads, writes;

 protected:
  void visit_BufferLoad(const ir::BufferLoad* op) override {
    note(op->buffer, &reads);
    IRVisitor::visit_BufferLoad(op);
  }
  void visit_BufferStore(const ir::BufferStore* op) override {
    note(op->buffer, &writes);
    IRVisitor::visit_BufferStore(op);
  }
  void visit_Copy(const ir::Copy* op) override {
    note(op->src.buffer, &reads);
    note(op->dst.buffer, &writes);
    IRVisitor::visit_Copy(op);
  }
  void visit_Gemm(const ir::Gemm* op) override {
    note(op->a.buffer, &reads);
    note(op->b.buffer, &reads);
    note(op->c.buffer, &reads);
    note(op->c.buffer, &writes);
    IRVisitor::visit_Gemm(op);
  }
  void visit_Gemv(const ir::Gemv* op) override {
    note(op->a.buffer, &reads);
    note(op->x.buffer, &reads);
    note(op->y.buffer, &reads);
    note(op->y.buffer, &writes);
    IRVisitor::visit_Gemv(op);
  }
  void visit_Fill(const ir::Fill* op) override {
    note(op->dst.buffer, &writes);
    IRVisitor::visit_Fill(op);
  }
  void visit_Reduce(const ir::Reduce* op) override {
    note(op->src.buffer, &reads);
    note(op->dst.buffer, &reads);
    note(op->dst.buffer, &writes);
    IRVisitor::visit_Reduce(op);
  }
  void visit_AtomicAdd(const ir::AtomicAdd* op) override {
    if (op->src.buffer) note(op->src.buffer, &reads);
    // Atomics to one address from many threads need no barrier among themselves, but a plain
    // access after them does.
    note(op->dst.buffer, &writes);
    IRVisitor::visit_AtomicAdd(op);
  }

 private:
  static void note(const ir::Buffer& b, BufferSet* set) {
    if (b && b->scope == ir::MemoryScope::Shared) set->insert(b.get());
  }
};

}  // namespace tilec::passes

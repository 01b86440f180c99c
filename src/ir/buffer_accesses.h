// The buffers of one memory scope that a statement reads and writes, over all of a block's
// threads (a tile op touches its operands from many threads): the shared buffers that need
// barriers and their lifetimes (passes/cuda), the tensors a kernel writes (the runtime's
// check that outputs are writable).
#pragma once

#include <unordered_set>

#include "ir/visitor.h"

namespace tilec::ir {

using BufferSet = std::unordered_set<const BufferNode*>;

class BufferAccesses : public IRVisitor {
 public:
  explicit BufferAccesses(MemoryScope scope) : scope_(scope) {}

  BufferSet reads, writes;

 protected:
  void visit_BufferLoad(const BufferLoad* op) override {
    note(op->buffer, &reads);
    IRVisitor::visit_BufferLoad(op);
  }
  void visit_BufferStore(const BufferStore* op) override {
    note(op->buffer, &writes);
    IRVisitor::visit_BufferStore(op);
  }
  void visit_Copy(const Copy* op) override {
    note(op->src.buffer, &reads);
    note(op->dst.buffer, &writes);
    IRVisitor::visit_Copy(op);
  }
  void visit_Gemm(const Gemm* op) override {
    note(op->a.buffer, &reads);
    note(op->b.buffer, &reads);
    note(op->c.buffer, &reads);
    note(op->c.buffer, &writes);
    IRVisitor::visit_Gemm(op);
  }
  void visit_Gemv(const Gemv* op) override {
    note(op->a.buffer, &reads);
    note(op->x.buffer, &reads);
    note(op->y.buffer, &reads);
    note(op->y.buffer, &writes);
    IRVisitor::visit_Gemv(op);
  }
  void visit_Fill(const Fill* op) override {
    note(op->dst.buffer, &writes);
    IRVisitor::visit_Fill(op);
  }
  void visit_Reduce(const Reduce* op) override {
    note(op->src.buffer, &reads);
    note(op->dst.buffer, &reads);
    note(op->dst.buffer, &writes);
    IRVisitor::visit_Reduce(op);
  }
  void visit_AtomicAdd(const AtomicAdd* op) override {
    if (op->src.buffer) note(op->src.buffer, &reads);
    // Atomics to one address from many threads need no barrier among themselves, but a plain
    // access after them does.
    note(op->dst.buffer, &writes);
    IRVisitor::visit_AtomicAdd(op);
  }

 private:
  void note(const Buffer& b, BufferSet* set) const {
    if (b && b->scope == scope_) set->insert(b.get());
  }

  MemoryScope scope_;
};

}  // namespace tilec::ir

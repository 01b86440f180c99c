// Which values of a kernel that reads the thread index (T.get_thread_binding) differ from
// thread to thread: the thread index, the lets and loop vars computed from such values, and
// the locals and fragments written with them or under a condition or loop that depends on them. The CPU
// (passes/thread_loops.h) gives those statements a loop over the threads; GPU lowering makes
// a scalar T.atomic_add that reads them on every thread, not once for the block.
#pragma once

#include <unordered_set>

#include "ir/ir.h"
#include "ir/visitor.h"

namespace tilec::passes {

// Whether `s` is T.sync_threads(): every thread of the block waits for the others.
bool is_block_barrier(const ir::Stmt& s);

// Whether `s` is T.cluster_sync(): every thread of the cluster's blocks waits for the others.
bool is_cluster_barrier(const ir::Stmt& s);

// Whether `call` is an arrival of the calling thread at an mbarrier (T.barrier_arrive,
// T.mbarrier_arrive_expect_tx, T.cp_async_barrier_noinc).
bool is_mbarrier_arrival(const ir::Call& call);

// The buffer whose elements `b` names: b, or the buffer a view (T.reshape) reads.
const ir::BufferNode* storage_of(const ir::BufferNode* b);

// What a statement or expression reads and writes (a view's buffer for a view), and its first
// barrier (of the block or of its cluster), if any.
struct Footprint : ir::IRVisitor {
  std::unordered_set<const ir::ExprNode*> vars;
  std::unordered_set<const ir::BufferNode*> buffers;
  bool shared = false;  // touches a shared buffer
  const ir::StmtNode* barrier = nullptr;
  // holds a thread group or thread_in branch, or an mbarrier arrival (each thread's own)
  bool thread_parts = false;
  bool block_rank = false;  // reads the block's rank in its cluster

  void visit_Var(const ir::Var* op) override;
  void visit_BufferLoad(const ir::BufferLoad* op) override;
  void visit_BufferStore(const ir::BufferStore* op) override;
  void visit_Evaluate(const ir::Evaluate* op) override;
  void visit_Call(const ir::Call* op) override;
  void visit_region(const ir::BufferRegion& region) override;
};

// The error of a barrier that not every thread of the block reaches.
[[noreturn]] void barrier_not_reached_by_all(const SourceLoc& loc);

template <typename Node>
Footprint footprint_of(const Node& n) {
  Footprint f;
  f.visit(n);
  return f;
}

class ThreadValues : ir::IRVisitor {
 public:
  // `thread_index` null: a kernel that reads none, where no value differs.
  ThreadValues(const ir::Expr& thread_index, const ir::Stmt& body);
  // The values of a clustered kernel that differ between its threads or its blocks: those
  // computed from the thread index (when read), the block indices or the block's rank.
  static ThreadValues across_cluster(const ir::KernelLaunch& launch);

  bool differs(const Footprint& f) const;
  template <typename Node>
  bool differs(const Node& n) const { return n && differs(footprint_of(n)); }
  // Whether `s` runs under a condition or in a loop whose bounds differ between threads.
  bool under_thread_control(const ir::StmtNode* s) const { return controlled_.count(s) > 0; }
  // Whether each thread has its own copy of b's elements (of a view's buffer, for a view).
  bool is_thread_local(const ir::BufferNode* b) const { return buffers_.count(storage_of(b)) > 0; }
  bool is_thread_value(const ir::Expr& var) const { return vars_.count(var.get()) > 0; }
  // A block barrier in `body` under thread control is an error (barrier_not_reached_by_all).
  void check_barriers(const ir::Stmt& body) const;
  // Of across_cluster's values: a T.cluster_sync under a condition or in a loop that differs
  // between threads or blocks is an error (a block that never reaches it leaves the others
  // waiting).
  void check_cluster_barriers(const ir::Stmt& body) const;

 private:
  ThreadValues() = default;
  void spread(const ir::Stmt& body);
  void visit(const ir::Stmt& s) override;
  using ir::IRVisitor::visit;
  void visit_LetStmt(const ir::LetStmt* op) override;
  void visit_For(const ir::For* op) override;
  void visit_While(const ir::While* op) override;
  void visit_IfThenElse(const ir::IfThenElse* op) override;
  void visit_BufferStore(const ir::BufferStore* op) override;
  void visit_AtomicAdd(const ir::AtomicAdd* op) override;
  void controlled(bool differ, const ir::Stmt& body);

  std::unordered_set<const ir::ExprNode*> vars_;
  std::unordered_set<const ir::BufferNode*> buffers_;
  std::unordered_set<const ir::StmtNode*> controlled_;
  bool control_ = false;
  bool block_rank_differs_ = false;
};

}  // namespace tilec::passes

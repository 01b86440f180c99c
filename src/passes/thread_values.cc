#include "passes/thread_values.h"

#include "base/diagnostics.h"
#include "ir/device_calls.h"

namespace tilec::passes {

bool is_block_barrier(const ir::Stmt& s) { return ir::is_device_call(s, "sync_threads"); }

bool is_cluster_barrier(const ir::Stmt& s) { return ir::is_device_call(s, "cluster_sync"); }

bool is_mbarrier_arrival(const ir::Call& call) {
  const std::string prefix = ir::kDeviceCallPrefix;
  return call.name == prefix + "mbarrier_arrive" || call.name == prefix + "mbarrier_arrive_expect_tx" ||
         call.name == prefix + "cp_async_mbarrier_arrive_noinc" || call.name == prefix + "mbarrier_arrive_in_block";
}

const ir::BufferNode* storage_of(const ir::BufferNode* b) { return b->view_of ? b->view_of.get() : b; }

void Footprint::visit_Var(const ir::Var* op) { vars.insert(op); }

void Footprint::visit_BufferLoad(const ir::BufferLoad* op) {
  buffers.insert(storage_of(op->buffer.get()));
  shared |= op->buffer->scope == ir::MemoryScope::Shared;
  ir::IRVisitor::visit_BufferLoad(op);
}

void Footprint::visit_BufferStore(const ir::BufferStore* op) {
  buffers.insert(storage_of(op->buffer.get()));
  shared |= op->buffer->scope == ir::MemoryScope::Shared;
  ir::IRVisitor::visit_BufferStore(op);
}

void Footprint::visit_region(const ir::BufferRegion& region) {
  if (!region.buffer) return;  // a scalar T.atomic_add's source
  buffers.insert(storage_of(region.buffer.get()));
  shared |= region.buffer->scope == ir::MemoryScope::Shared;
  ir::IRVisitor::visit_region(region);
}

void Footprint::visit_Evaluate(const ir::Evaluate* op) {
  const auto* call = op->value.as<ir::Call>();
  if (!barrier && call &&
      (call->name == std::string(ir::kDeviceCallPrefix) + "sync_threads" ||
       call->name == std::string(ir::kDeviceCallPrefix) + "cluster_sync"))
    barrier = op;
  ir::IRVisitor::visit_Evaluate(op);
}

void Footprint::visit_Call(const ir::Call* op) {
  thread_parts |= op->name == ir::kThreadGroup || op->name == ir::kThreadIn || is_mbarrier_arrival(*op);
  block_rank |= op->name == std::string(ir::kDeviceCallPrefix) + "block_rank_in_cluster";
  ir::IRVisitor::visit_Call(op);
}

void barrier_not_reached_by_all(const SourceLoc& loc) {
  error_at(loc, "a block barrier (T.sync_threads, or one the threads' shared-memory hand-offs need) under "
                "a condition or in a loop that differs from thread to thread: every thread of the block must "
                "reach it, or the others wait forever; hand values on through shared memory outside such "
                "conditions");
}

namespace {

// The first statement of `body` that is_barrier takes and `values` finds under control: fail(its loc).
template <class IsBarrier, class Fail>
void check_reached_by_all(const ThreadValues& values, const ir::Stmt& body, IsBarrier is_barrier, Fail fail) {
  struct Barriers : ir::IRVisitor {
    const ThreadValues& values;
    IsBarrier is_barrier;
    Fail fail;
    Barriers(const ThreadValues& v, IsBarrier b, Fail f) : values(v), is_barrier(b), fail(f) {}
    void visit(const ir::Stmt& s) override {
      if (s && is_barrier(s) && values.under_thread_control(s.get())) fail(s->loc);
      ir::IRVisitor::visit(s);
    }
    using ir::IRVisitor::visit;
  } barriers(values, is_barrier, fail);
  barriers.visit(body);
}

}  // namespace

void ThreadValues::check_barriers(const ir::Stmt& body) const {
  check_reached_by_all(*this, body, is_block_barrier, barrier_not_reached_by_all);
}

void ThreadValues::check_cluster_barriers(const ir::Stmt& body) const {
  check_reached_by_all(*this, body, is_cluster_barrier, [](const SourceLoc& loc) {
    error_at(loc, "T.cluster_sync under a condition or in a loop that differs from thread to thread or from block "
                  "to block: every thread of every block of the cluster must reach it, or the others wait forever");
  });
}

ThreadValues::ThreadValues(const ir::Expr& thread_index, const ir::Stmt& body) {
  if (!thread_index) return;  // a kernel that reads no thread index: nothing differs
  vars_.insert(thread_index.get());
  spread(body);
}

ThreadValues ThreadValues::across_cluster(const ir::KernelLaunch& launch) {
  ThreadValues values;
  if (launch.thread_index) values.vars_.insert(launch.thread_index.get());
  for (const ir::Expr& block : launch.block_vars) values.vars_.insert(block.get());
  values.block_rank_differs_ = true;
  values.spread(launch.body);
  return values;
}

// To what the seeds are computed into, until nothing more differs.
void ThreadValues::spread(const ir::Stmt& body) {
  size_t before;
  do {
    before = vars_.size() + buffers_.size();
    visit(body);
  } while (vars_.size() + buffers_.size() != before);
}

bool ThreadValues::differs(const Footprint& f) const {
  if (block_rank_differs_ && f.block_rank) return true;
  for (const auto* v : f.vars)
    if (vars_.count(v)) return true;
  for (const auto* b : f.buffers)
    if (buffers_.count(b)) return true;
  return false;
}

void ThreadValues::visit(const ir::Stmt& s) {
  if (s && control_) controlled_.insert(s.get());
  ir::IRVisitor::visit(s);
}

void ThreadValues::visit_LetStmt(const ir::LetStmt* op) {
  if (control_ || differs(op->value)) vars_.insert(op->var.get());
  visit(op->body);
}

void ThreadValues::visit_For(const ir::For* op) {
  bool differ = control_ || differs(op->min) || differs(op->extent);
  if (differ) vars_.insert(op->var.get());
  controlled(differ, op->body);
}

void ThreadValues::visit_While(const ir::While* op) { controlled(control_ || differs(op->condition), op->body); }

void ThreadValues::visit_IfThenElse(const ir::IfThenElse* op) {
  bool differ = control_ || differs(op->condition);
  controlled(differ, op->then_case);
  controlled(differ, op->else_case);
}

// A fragment that thread-by-thread code writes is replicated on a GPU (infer_layout gives a
// fragment with scalar uses every element in every thread): each thread's copy is its own, as a
// local's is.
void ThreadValues::visit_BufferStore(const ir::BufferStore* op) {
  const ir::BufferNode* storage = storage_of(op->buffer.get());
  const bool registers = op->buffer->scope == ir::MemoryScope::Local || op->buffer->scope == ir::MemoryScope::Fragment;
  if (!registers || buffers_.count(storage)) return;
  bool differ = control_ || differs(op->value);
  for (const auto& i : op->indices) differ |= differs(i);
  if (differ) buffers_.insert(storage);
}

// What an atomic's caller gets back differs from thread to thread, whatever it adds.
void ThreadValues::visit_AtomicAdd(const ir::AtomicAdd* op) {
  if (op->prev.buffer && op->prev.buffer->scope == ir::MemoryScope::Local)
    buffers_.insert(storage_of(op->prev.buffer.get()));
}

void ThreadValues::controlled(bool differ, const ir::Stmt& body) {
  bool saved = control_;
  control_ = differ;
  visit(body);
  control_ = saved;
}

}  // namespace tilec::passes

#include "passes/gpu/merge_cp_async_waits.h"

#include <string>
#include <vector>

#include "ir/device_calls.h"
#include "ir/mutator.h"
#include "ir/visitor.h"

namespace tilec::passes {
namespace {

using ir::Stmt;

bool is_wait_all(const Stmt& s) { return ir::is_device_call(s, "cp_async_wait_all"); }

// Whether `s` leaves shared memory alone, but for cp.async copies into it. A device call as a
// statement (a barrier, a fence, a gemm) counts as touching it; one inside a value (exp2, a
// shuffle) touches only what its arguments address.
bool off_shared_memory(const Stmt& s) {
  struct Check : ir::IRVisitor {
    bool off = true;
    void visit_Evaluate(const ir::Evaluate* op) override {
      const auto* call = op->value.as<ir::Call>();
      const std::string prefix = ir::kDeviceCallPrefix;
      if (call && call->name.rfind(prefix + "cp_async_", 0) == 0) return;  // its arguments are addresses
      if (call && call->name.rfind(prefix, 0) == 0) off = false;
      IRVisitor::visit_Evaluate(op);
    }
    void visit_BufferLoad(const ir::BufferLoad* op) override {
      off &= op->buffer->scope != ir::MemoryScope::Shared;
      IRVisitor::visit_BufferLoad(op);
    }
    void visit_BufferStore(const ir::BufferStore* op) override {
      off &= op->buffer->scope != ir::MemoryScope::Shared;
      IRVisitor::visit_BufferStore(op);
    }
  } check;
  check.visit(s);
  return check.off;
}

class MergeWaits : public ir::IRMutator {
 protected:
  // Each wait moved down its list to the first statement that touches shared memory (or the
  // list's end); one that meets another wait there goes.
  Stmt mutate_Seq(const ir::Seq* op, const Stmt& self) override {
    Stmt mutated = IRMutator::mutate_Seq(op, self);
    std::vector<Stmt> stmts;
    flatten(mutated, &stmts);
    std::vector<Stmt> kept;
    Stmt waiting;  // a wait being moved down
    for (const Stmt& s : stmts) {
      if (is_wait_all(s)) {
        waiting = s;
        continue;
      }
      if (waiting && !off_shared_memory(s)) {
        kept.push_back(waiting);
        waiting = Stmt();
      }
      kept.push_back(s);
    }
    if (waiting) kept.push_back(waiting);
    bool changed = kept.size() != stmts.size();
    for (size_t i = 0; i < kept.size() && !changed; ++i) changed = !kept[i].same_as(stmts[i]);
    return changed ? ir::with_loc(ir::make_seq(std::move(kept)), mutated->loc) : mutated;
  }

 private:
  // The statements of nested lists, in order (lowering makes a list of each tile op's).
  static void flatten(const Stmt& s, std::vector<Stmt>* out) {
    if (const auto* seq = s.as<ir::Seq>()) {
      for (const Stmt& x : seq->stmts) flatten(x, out);
    } else {
      out->push_back(s);
    }
  }
};

}  // namespace

ir::Stmt merge_cp_async_waits(const ir::Stmt& body, const PassContext&) { return MergeWaits().mutate(body); }

}  // namespace tilec::passes

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

// Whether `s` leaves shared memory alone, but for cp.async copies into it.
bool off_shared_memory(const Stmt& s) {
  struct Check : ir::IRVisitor {
    bool off = true;
    void visit_Call(const ir::Call* op) override {
      const std::string prefix = ir::kDeviceCallPrefix;
      if (op->name.rfind(prefix + "cp_async_", 0) == 0) return;  // its arguments are addresses
      if (op->name.rfind(prefix, 0) == 0) off = false;
      IRVisitor::visit_Call(op);
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
  Stmt mutate_Seq(const ir::Seq* op, const Stmt& self) override {
    Stmt mutated = IRMutator::mutate_Seq(op, self);
    std::vector<Stmt> stmts;
    flatten(mutated, &stmts);
    std::vector<Stmt> kept;
    bool changed = false;
    for (size_t i = 0; i < stmts.size(); ++i) {
      if (is_wait_all(stmts[i]) && later_wait(stmts, i + 1)) {
        changed = true;
        continue;
      }
      kept.push_back(stmts[i]);
    }
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

  // Whether a wait for every copy comes at or after `from`, with nothing before it that needs
  // the copies landed.
  static bool later_wait(const std::vector<Stmt>& stmts, size_t from) {
    for (size_t j = from; j < stmts.size(); ++j) {
      if (is_wait_all(stmts[j])) return true;
      if (!off_shared_memory(stmts[j])) return false;
    }
    return false;
  }
};

}  // namespace

ir::Stmt merge_cp_async_waits(const ir::Stmt& body, const PassContext&) { return MergeWaits().mutate(body); }

}  // namespace tilec::passes

#include "passes/thread_groups.h"

#include "base/diagnostics.h"
#include "ir/device_calls.h"
#include "ir/visitor.h"

namespace tilec::passes {
namespace {

constexpr int kFirstGroupBarrier = 2, kNamedBarriers = 16;

struct Groups : ir::IRVisitor {
  std::map<ThreadSpan, int> spans;
  void visit_IfThenElse(const ir::IfThenElse* op) override {
    if (const auto* call = op->condition.as<ir::Call>(); call && call->name == ir::kThreadGroup) {
      int64_t lo = 0, hi = 0;
      ir::is_const_int(call->args.at(0), &lo);
      ir::is_const_int(call->args.at(1), &hi);
      spans.emplace(ThreadSpan{lo, hi}, 0);
    }
    IRVisitor::visit_IfThenElse(op);
  }
};

}  // namespace

std::optional<ThreadSpan> thread_group_of(const ir::Stmt& s) {
  const auto* branch = s.as<ir::IfThenElse>();
  return branch ? thread_group_of(*branch) : std::nullopt;
}

namespace {

// The span of an If on `call_name`(lo, hi), else nullopt.
std::optional<ThreadSpan> span_of(const ir::IfThenElse& branch, const char* call_name) {
  const auto* call = branch.condition.as<ir::Call>();
  ThreadSpan span;
  if (!call || call->name != call_name || !ir::is_const_int(call->args.at(0), &span.lo) ||
      !ir::is_const_int(call->args.at(1), &span.hi))
    return std::nullopt;
  return span;
}

}  // namespace

std::optional<ThreadSpan> thread_group_of(const ir::IfThenElse& branch) { return span_of(branch, ir::kThreadGroup); }

std::optional<ThreadSpan> thread_in_of(const ir::IfThenElse& branch) { return span_of(branch, ir::kThreadIn); }

bool has_thread_groups(const ir::Stmt& s) {
  Groups groups;
  groups.visit(s);
  return !groups.spans.empty();
}

GroupBarriers::GroupBarriers(const ir::Stmt& kernel_body, const SourceLoc& loc) {
  Groups groups;
  groups.visit(kernel_body);
  ids_ = std::move(groups.spans);
  int id = kFirstGroupBarrier;
  for (auto& [span, barrier] : ids_) barrier = id++;
  if (id > kNamedBarriers)
    error_at(loc, "this kernel's T.ws groups span " + std::to_string(ids_.size()) +
                      " different thread ranges, each with a named barrier of its own; a block has " +
                      std::to_string(kNamedBarriers - kFirstGroupBarrier) + " to give them");
}

std::string GroupBarriers::barrier(ThreadSpan span) const {
  return "sync_threads_partial<" + std::to_string(ids_.at(span)) + ", " + std::to_string(span.threads()) + ">";
}

}  // namespace tilec::passes

#include "passes/gpu/select_instructions.h"

#include "ir/mutator.h"
#include "ir/region.h"
#include "ir/simplify.h"
#include "op/layout_constraints.h"
#include "passes/thread_groups.h"

namespace tilec::passes {

using ir::Expr;
using ir::Stmt;
using op::const_extents;
using op::is_fragment;

bool whole_fragment(const ir::BufferRegion& r) {
  if (!is_fragment(r.buffer) || r.region.size() != 2) return false;
  for (size_t d = 0; d < 2; ++d) {
    int64_t e, f;
    if (!ir::is_zero(ir::simplify(r.region[d].min)) || !ir::is_const_int(ir::simplify(r.region[d].extent), &e) ||
        !ir::is_const_int(ir::simplify(r.buffer->shape[d]), &f) || e != f)
      return false;
  }
  return true;
}

bool whole_shared_tile(const ir::BufferRegion& r) {
  size_t rank = r.region.size();
  if (r.buffer->scope != ir::MemoryScope::Shared || rank < 2) return false;
  for (size_t d = 0; d < rank; ++d) {
    Expr extent = ir::simplify(r.region[d].extent);
    if (d + 2 < rank) {
      if (!ir::is_one(extent)) return false;
      continue;
    }
    int64_t e, f;
    if (!ir::is_zero(ir::simplify(r.region[d].min)) || !ir::is_const_int(extent, &e) ||
        !ir::is_const_int(ir::simplify(r.buffer->shape[d]), &f) || e != f)
      return false;
  }
  return true;
}

std::optional<GemmShape> gemm_shape(const ir::Gemm& op) {
  auto ec = const_extents(ir::squeezed_extents(op.c));
  auto ea = const_extents(ir::squeezed_extents(op.a));
  if (ec.size() != 2 || ea.size() != 2 || op.c.buffer->shape.size() != 2) return std::nullopt;
  for (size_t d = 0; d < 2; ++d) {
    int64_t extent;
    if (!ir::is_const_int(op.c.buffer->shape[d], &extent) || extent != ec[d]) return std::nullopt;
  }
  return GemmShape{ec[0], ec[1], op.transpose_a ? ea[0] : ea[1]};
}

namespace {

// The gemms and copies of one kernel, each given the target's choice unless it has one; those
// of a T.ws group, the choice for its threads (passes/thread_groups.h).
class KernelSelection : public ir::IRMutator {
 public:
  KernelSelection(const Stmt& body, int threads, const InstructionHooks& hooks, const PassContext& ctx)
      : choice_(hooks.kernel(body, threads, ctx)), hooks_(hooks), ctx_(ctx) {}

 protected:
  Stmt mutate_IfThenElse(const ir::IfThenElse* op, const Stmt& self) override {
    auto span = thread_group_of(self);
    if (!span) return IRMutator::mutate_IfThenElse(op, self);
    Stmt then_case = KernelSelection(op->then_case, static_cast<int>(span->threads()), hooks_, ctx_).mutate(op->then_case);
    Stmt else_case = mutate(op->else_case);
    if (then_case.same_as(op->then_case) && else_case.same_as(op->else_case)) return self;
    auto n = std::make_shared<ir::IfThenElse>(*op);
    n->then_case = then_case;
    n->else_case = else_case;
    return Stmt(n);
  }

  Stmt mutate_Gemm(const ir::Gemm* op, const Stmt& self) override {
    if (op->instruction.selected()) return self;
    auto n = std::make_shared<ir::Gemm>(*op);
    n->instruction = choice_->gemm(*op);
    return Stmt(n);
  }

  Stmt mutate_Copy(const ir::Copy* op, const Stmt& self) override {
    if (op->instruction.selected() || is_fragment(op->src.buffer) || is_fragment(op->dst.buffer)) return self;
    auto n = std::make_shared<ir::Copy>(*op);
    n->instruction = choice_->copy(*op);
    return Stmt(n);
  }

  Stmt mutate_AtomicAdd(const ir::AtomicAdd* op, const Stmt& self) override {
    if (op->instruction.selected() || !op->src.buffer || op->src.buffer->scope != ir::MemoryScope::Shared ||
        op->dst.buffer->scope != ir::MemoryScope::Global)
      return self;
    auto n = std::make_shared<ir::AtomicAdd>(*op);
    n->instruction = choice_->atomic_add(*op);
    return Stmt(n);
  }

 private:
  std::unique_ptr<KernelInstructionChoice> choice_;
  const InstructionHooks& hooks_;
  const PassContext& ctx_;
};

class Selection : public ir::IRMutator {
 public:
  explicit Selection(const PassContext& ctx) : ctx_(ctx), hooks_(instruction_hooks(ctx.target)) {}

 protected:
  Stmt mutate_KernelLaunch(const ir::KernelLaunch* op, const Stmt& self) override {
    Stmt body = KernelSelection(op->body, op->threads, hooks_, ctx_).mutate(op->body);
    if (body.same_as(op->body)) return self;
    auto n = std::make_shared<ir::KernelLaunch>(*op);
    n->body = body;
    return Stmt(n);
  }

 private:
  const PassContext& ctx_;
  InstructionHooks hooks_;
};

// The copies between fragments and shared memory, once the fragments have their layouts.
class FragmentCopySelection : public ir::IRMutator {
 public:
  explicit FragmentCopySelection(const PassContext& ctx) : ctx_(ctx), hooks_(instruction_hooks(ctx.target)) {}

 protected:
  Stmt mutate_KernelLaunch(const ir::KernelLaunch* op, const Stmt& self) override {
    threads_ = op->threads;
    return IRMutator::mutate_KernelLaunch(op, self);
  }

  Stmt mutate_IfThenElse(const ir::IfThenElse* op, const Stmt& self) override {
    auto span = thread_group_of(self);
    if (!span) return IRMutator::mutate_IfThenElse(op, self);
    const int block = threads_;
    threads_ = static_cast<int>(span->threads());
    Stmt then_case = mutate(op->then_case);
    threads_ = block;
    auto n = std::make_shared<ir::IfThenElse>(*op);
    n->then_case = then_case;
    n->else_case = mutate(op->else_case);
    return Stmt(n);
  }

  Stmt mutate_Copy(const ir::Copy* op, const Stmt& self) override {
    if (op->instruction.selected()) return self;
    auto n = std::make_shared<ir::Copy>(*op);
    n->instruction = hooks_.fragment_copy(*op, threads_, ctx_);
    return Stmt(n);
  }

 private:
  const PassContext& ctx_;
  InstructionHooks hooks_;
  int threads_ = 128;
};

}  // namespace

ir::Stmt select_instructions(const ir::Stmt& body, const PassContext& ctx) { return Selection(ctx).mutate(body); }

ir::Stmt select_fragment_copies(const ir::Stmt& body, const PassContext& ctx) {
  return FragmentCopySelection(ctx).mutate(body);
}

}  // namespace tilec::passes

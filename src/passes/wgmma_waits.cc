#include "passes/wgmma_waits.h"

#include <string>
#include <vector>

#include "ir/device_calls.h"
#include "ir/layout.h"
#include "ir/mutator.h"
#include "ir/visitor.h"

namespace tilec::passes {
namespace {

using ir::Expr;
using ir::Stmt;

bool asynchronous(const ir::Gemm& g) { return g.wg_wait != 0 && g.instruction.kind == ir::GemmInstructionKind::Wgmma; }

// The fragments the asynchronous gemms of a launch write or read in registers.
std::vector<ir::Buffer> in_flight_fragments(const Stmt& s) {
  struct Collect : ir::IRVisitor {
    std::vector<ir::Buffer> fragments;
    void add(const ir::Buffer& b) {
      for (const ir::Buffer& f : fragments)
        if (f.get() == b.get()) return;
      fragments.push_back(b);
    }
    void visit_Gemm(const ir::Gemm* op) override {
      if (asynchronous(*op)) {
        if (op->instruction.a_in_registers) add(op->a.buffer);
        add(op->c.buffer);
      }
      IRVisitor::visit_Gemm(op);
    }
  } collect;
  collect.visit(s);
  return collect.fragments;
}

bool is_wait(const Stmt& s, int64_t* n) {
  const auto* eval = s.as<ir::Evaluate>();
  const auto* call = eval ? eval->value.as<ir::Call>() : nullptr;
  return call && call->name == ir::kWaitWgmma && ir::is_const_int(call->args.at(0), n);
}

class Waits : public ir::IRMutator {
 protected:
  Stmt mutate_KernelLaunch(const ir::KernelLaunch* op, const Stmt& self) override {
    std::vector<ir::Buffer> saved = std::move(fragments_);
    fragments_ = in_flight_fragments(op->body);
    Stmt out = IRMutator::mutate_KernelLaunch(op, self);
    fragments_ = std::move(saved);
    return out;
  }

  Stmt mutate_Evaluate(const ir::Evaluate* op, const Stmt& self) override {
    int64_t n = 0;
    if (!is_wait(self, &n)) return IRMutator::mutate_Evaluate(op, self);
    if (fragments_.empty()) return ir::make_seq({});
    return wait(n, self->loc);
  }

  Stmt mutate_Gemm(const ir::Gemm* op, const Stmt& self) override {
    if (op->wg_wait == 0) return self;
    auto n = std::make_shared<ir::Gemm>(*op);
    if (!asynchronous(*op)) {
      n->wg_wait = 0;
      return Stmt(n);
    }
    if (op->wg_wait < 0) return self;
    n->wg_wait = -1;
    return ir::with_loc(ir::make_seq({Stmt(n), wait(op->wg_wait, op->loc)}), op->loc);
  }

 private:
  Stmt wait(int64_t n, const SourceLoc& loc) const {
    std::vector<Stmt> out{ir::device_call("wgmma_wait<" + std::to_string(n) + ">", {}, loc)};
    for (const ir::Buffer& f : fragments_) {
      if (!f->fragment) throw std::logic_error("wgmma_waits: a gemm's fragment " + f->name + " has no layout");
      std::vector<Expr> origin(f->shape.size(), ir::make_int(0));
      out.push_back(ir::device_call("fence_fragment<" + std::to_string(f->fragment->slots()) + ">",
                                    {ir::address_of(f, origin)}, loc));
    }
    return ir::with_loc(ir::make_seq(std::move(out)), loc);
  }

  std::vector<ir::Buffer> fragments_;
};

}  // namespace

ir::Stmt wgmma_waits(const ir::Stmt& body, const PassContext&) { return Waits().mutate(body); }

}  // namespace tilec::passes

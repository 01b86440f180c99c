#include "passes/hip/stage_register_operands.h"

#include <unordered_map>

#include "ir/mutator.h"
#include "ir/region.h"
#include "passes/gpu/select_instructions.h"

namespace tilec::passes {
namespace {

using ir::Stmt;

class RegisterOperandStaging : public ir::IRMutator {
 protected:
  // A staged fragment's LDS copy lives as long as the fragment.
  Stmt mutate_Allocate(const ir::Allocate* op, const Stmt& self) override {
    Stmt s = IRMutator::mutate_Allocate(op, self);
    auto it = staged_.find(op->buffer.get());
    if (it == staged_.end()) return s;
    auto shared = std::make_shared<ir::Allocate>();
    shared->buffer = it->second;
    shared->body = s.as<ir::Allocate>()->body;
    shared->loc = op->loc;
    auto fragment = std::make_shared<ir::Allocate>(*s.as<ir::Allocate>());
    fragment->body = Stmt(shared);
    return Stmt(fragment);
  }

  Stmt mutate_Gemm(const ir::Gemm* op, const Stmt& self) override {
    if (op->instruction.kind == ir::GemmInstructionKind::Mfma) return self;
    auto gemm = std::make_shared<ir::Gemm>(*op);
    std::vector<Stmt> out;
    for (ir::BufferRegion* operand : {&gemm->a, &gemm->b}) {
      if (!whole_fragment(*operand)) continue;
      auto copy = std::make_shared<ir::Copy>();
      copy->src = *operand;
      copy->dst = ir::full_region(staging_buffer(operand->buffer));
      copy->loc = op->loc;
      out.push_back(Stmt(copy));
      *operand = copy->dst;
    }
    if (out.empty()) return self;
    gemm->instruction = {};  // its operands changed: select_instructions chooses again
    out.push_back(Stmt(gemm));
    return ir::make_seq(out);
  }

 private:
  const ir::Buffer& staging_buffer(const ir::Buffer& fragment) {
    auto it = staged_.find(fragment.get());
    if (it == staged_.end())
      it = staged_.emplace(fragment.get(), ir::make_buffer(fragment->name + "_shared", fragment->dtype, fragment->shape,
                                                           {}, ir::MemoryScope::Shared, fragment->loc))
               .first;
    return it->second;
  }

  std::unordered_map<const ir::BufferNode*, ir::Buffer> staged_;
};

}  // namespace

ir::Stmt stage_register_operands(const ir::Stmt& body, const PassContext&) {
  return RegisterOperandStaging().mutate(body);
}

}  // namespace tilec::passes

#include "passes/hip/instructions.h"

#include "base/log.h"
#include "passes/hip/mfma.h"

namespace tilec::passes {
namespace {

class HipKernelInstructions : public KernelInstructionChoice {
 public:
  HipKernelInstructions(int threads, const PassContext& ctx) : threads_(threads), ctx_(ctx) {}

  ir::GemmInstruction gemm(const ir::Gemm& op) const override {
    if (auto mfma = mfma_instruction(op, threads_, ctx_)) return *mfma;
    if (log_enabled(LogLevel::Debug) && ctx_.target.has(TargetFeature::Mfma))
      log(LogLevel::Debug, op.loc.str() + ": T.gemm runs on element loops, not MFMA: MFMA takes A and B of one "
                               "of float16, bfloat16 and float32, whole tiles in LDS (or A a whole fragment), C a "
                               "float32 fragment, M and N multiples of 16 and K of the instruction's");
    return {.kind = ir::GemmInstructionKind::Fma};
  }

  ir::CopyInstruction copy(const ir::Copy&) const override { return {.kind = ir::CopyInstructionKind::Loops}; }

 private:
  int threads_;
  const PassContext& ctx_;
};

}  // namespace

std::unique_ptr<KernelInstructionChoice> hip_kernel_instructions(const ir::Stmt&, int threads,
                                                                 const PassContext& ctx) {
  return std::make_unique<HipKernelInstructions>(threads, ctx);
}

ir::CopyInstruction hip_fragment_copy(const ir::Copy&, int, const PassContext&) {
  return {.kind = ir::CopyInstructionKind::Loops};
}

}  // namespace tilec::passes

#include "passes/hip/gemm_layouts.h"

#include "op/layout_constraints.h"
#include "passes/hip/mfma.h"

namespace tilec::passes {

std::optional<GemmLayoutDemands> hip_gemm_layouts(const ir::Gemm& gemm) {
  const ir::GemmInstruction& in = gemm.instruction;
  if (in.kind != ir::GemmInstructionKind::Mfma) return std::nullopt;
  auto c = op::const_shape(gemm.c.buffer);
  GemmLayoutDemands demands;
  demands.fragments.push_back({gemm.c.buffer, ir::mfma_accumulator(c[0], c[1], in.grid_m, in.grid_n)});
  if (in.a_in_registers) demands.fragments.push_back({gemm.a.buffer, mfma_register_a_layout(gemm)});
  for (const ir::Buffer& operand : {gemm.a.buffer, gemm.b.buffer})
    if (operand->scope == ir::MemoryScope::Shared) demands.shared.push_back({operand, nullptr});
  return demands;
}

}  // namespace tilec::passes

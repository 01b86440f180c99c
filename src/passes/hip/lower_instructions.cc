#include "passes/hip/lower_instructions.h"

#include <string>

namespace tilec::passes {

std::optional<ir::Stmt> hip_lower_gemm(const ir::Gemm& op, InstructionLoweringContext& ctx) {
  if (op.instruction.kind != ir::GemmInstructionKind::Mfma) return std::nullopt;
  const ir::GemmInstruction& waves = op.instruction;
  std::string name = waves.a_in_registers
                         ? "mfma_gemm_rs<" + gemm_shape_arguments(op) + std::to_string(waves.grid_m) + ", " +
                               template_bool(op.transpose_b) + ">"
                         : "mfma_gemm_ss<" + gemm_shape_arguments(op) + std::to_string(waves.grid_m) + ", " +
                               std::to_string(waves.grid_n) + ", " + template_bool(op.transpose_a) + ", " +
                               template_bool(op.transpose_b) + ">";
  return matrix_core_gemm_call(op, name, ctx);
}

}  // namespace tilec::passes

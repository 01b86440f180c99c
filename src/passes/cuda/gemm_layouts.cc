#include "passes/cuda/gemm_layouts.h"

#include "op/layout_constraints.h"

namespace tilec::passes {

using op::const_shape;

std::optional<GemmLayoutDemands> cuda_gemm_layouts(const ir::Gemm& gemm) {
  const ir::GemmInstruction& in = gemm.instruction;
  auto c = const_shape(gemm.c.buffer);
  GemmLayoutDemands demands;
  switch (in.kind) {
    case ir::GemmInstructionKind::Wgmma:
      demands.fragments.push_back({gemm.c.buffer, ir::wgmma_accumulator(c[0], c[1], in.grid_m, in.grid_n)});
      if (in.a_in_registers) {
        auto a = const_shape(gemm.a.buffer);
        demands.fragments.push_back({gemm.a.buffer, ir::wgmma_accumulator(a[0], a[1], in.grid_m, 1)});
      }
      return demands;
    case ir::GemmInstructionKind::MmaSync:
      demands.fragments.push_back({gemm.c.buffer, ir::mma_accumulator(c[0], c[1], in.grid_m, in.grid_n)});
      for (bool is_a : {true, false}) {
        const ir::Buffer& operand = is_a ? gemm.a.buffer : gemm.b.buffer;
        if (is_a ? in.a_in_registers : in.b_in_registers)
          demands.fragments.push_back({operand, register_operand_layout(gemm, is_a)});
        else if (is_a ? in.a_swizzled : in.b_swizzled)
          demands.shared.push_back({operand, ir::mma_swizzle_of(*operand)});
      }
      return demands;
    default: return std::nullopt;
  }
}

ir::Fragment register_operand_layout(const ir::Gemm& op, bool a) {
  // A (M x K) as the accumulator of an M x K tile over the warps along M; B as that of an
  // N x K tile over the warps along N. Stored the other way round (transpose_a, or B as
  // K x N), the same registers hold the transposed tile.
  auto shape = const_shape(a ? op.a.buffer : op.b.buffer);
  bool stored_k_major = a ? op.transpose_a : !op.transpose_b;
  int64_t rows = stored_k_major ? shape[1] : shape[0], k = stored_k_major ? shape[0] : shape[1];
  ir::Fragment acc = ir::mma_accumulator(rows, k, a ? op.instruction.grid_m : op.instruction.grid_n, 1);
  return stored_k_major ? acc.project({1, 0}) : acc;
}

}  // namespace tilec::passes

// CUDA's gemm layout hook (passes/gpu/gemm_layouts.h): what mma.sync and wgmma demand of a
// gemm's operands.
//
//   mma.sync  C: ir::mma_accumulator over the instruction's warp grid; an operand in registers
//             (gemm_rs / gemm_sr): register_operand_layout; a shared operand the instruction
//             reads swizzled: the mma swizzle (device/cuda/gemm.h)
//   wgmma     C: ir::wgmma_accumulator over the warpgroup grid; A in registers (wgmma_gemm_rs):
//             the accumulator of its M x K tile over the warpgroups along M
//
// The panels of wgmma's shared operands are on the instruction (a_panel_bytes, b_panel_bytes),
// which infer_layout reads for every target.
#pragma once

#include <optional>

#include "passes/gpu/gemm_layouts.h"

namespace tilec::passes {

std::optional<GemmLayoutDemands> cuda_gemm_layouts(const ir::Gemm& op);

// The layout of gemm `op`'s A (`a`) or B operand when it is a fragment on mma.sync (gemm_rs /
// gemm_sr), over the warps of its instruction.
ir::Fragment register_operand_layout(const ir::Gemm& op, bool a);

}  // namespace tilec::passes

// HIP's gemm layout hook (passes/gpu/gemm_layouts.h): what MFMA demands of a gemm's operands.
//
//   MFMA  C: ir::mfma_accumulator over the instruction's wave grid; A in registers
//         (mfma_gemm_rs): mfma_register_a_layout (passes/hip/mfma.h); the operands in LDS
//         row-major, as mfma_gemm_ss and mfma_gemm_rs read them (device/hip/mfma.h)
#pragma once

#include <optional>

#include "passes/gpu/gemm_layouts.h"

namespace tilec::passes {

std::optional<GemmLayoutDemands> hip_gemm_layouts(const ir::Gemm& op);

}  // namespace tilec::passes

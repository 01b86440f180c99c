// HIP's instruction lowering, its hook of lower_to_threads (passes/gpu/instruction_lowering.h):
// a gemm on MFMA calls mfma_gemm_ss, or mfma_gemm_rs with A in registers, over the waves of its
// instruction (device/hip/mfma.h). HIP has no copy instructions of its own (every copy runs in
// loops), so it has no copy hook.
#pragma once

#include <optional>

#include "passes/gpu/instruction_lowering.h"

namespace tilec::passes {

std::optional<ir::Stmt> hip_lower_gemm(const ir::Gemm& op, InstructionLoweringContext& ctx);

}  // namespace tilec::passes

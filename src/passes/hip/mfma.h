// T.gemm on AMD's matrix cores (MFMA, gfx90a and gfx940): whether a gemm runs there and over
// which grid of 64-lane waves. infer_layout gives such a gemm's accumulator
// ir::mfma_accumulator; lower_to_threads calls mfma_gemm_ss (device/hip/mfma.h).
#pragma once

#include <optional>

#include "ir/ir.h"
#include "passes/cuda/infer_layout.h"
#include "passes/pass.h"

namespace tilec::passes {

// Whether T.gemm `op` runs on MFMA (a target with TargetFeature::Mfma: hip gfx90a, gfx940) -- A and B whole 2-D tiles in LDS (of a pipeline stage, too), both float16, bfloat16
// or float32, C a whole float32 fragment, M and N multiples of 16 and K of the instruction's
// K (16, or 4 for float32) -- and over which waves_m x waves_n waves (WarpGrid's warps) of
// the block's `threads`: the most waves that split the tile into 16 x 16 parts as op.policy
// says, the squarest parts first.
std::optional<WarpGrid> mfma_wave_grid(const ir::Gemm& op, int threads, const PassContext& ctx);

}  // namespace tilec::passes

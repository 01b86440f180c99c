// T.gemm on AMD's matrix cores (MFMA, gfx90a and gfx940): whether a gemm runs there and over
// which grid of 64-lane waves, which HIP's choice of instructions asks
// (passes/hip/instructions.h). hip's gemm layout hook (passes/hip/gemm_layouts.h) has
// infer_layout give such a gemm's accumulator ir::mfma_accumulator, and a register A
// mfma_register_a_layout; lower_to_threads calls mfma_gemm_ss or mfma_gemm_rs
// (device/hip/mfma.h).
#pragma once

#include <optional>

#include "ir/ir.h"
#include "ir/layout.h"
#include "passes/pass.h"

namespace tilec::passes {

// Whether T.gemm `op` runs on MFMA (a target with TargetFeature::Mfma: hip gfx90a, gfx940) and
// over which grid_m x grid_n waves of the block's `threads`. B is a whole 2-D tile in LDS (of
// a pipeline stage, too); A is one too (mfma_gemm_ss), or a whole fragment (mfma_gemm_rs:
// its K a multiple of 16 and the grid one wave wide, each wave holding whole rows of A); A and
// B both float16, bfloat16 or float32, C a whole float32 fragment, M and N multiples of 16
// and K of the instruction's K (16, or 4 for float32). The grid is the most waves that split
// the tile into 16 x 16 parts as op.policy says, the squarest parts first (of two as square,
// the one with more waves along M).
std::optional<ir::GemmInstruction> mfma_instruction(const ir::Gemm& op, int threads, const PassContext& ctx);

// The layout of an MFMA gemm's A when it is a fragment (mfma_gemm_rs): the accumulator of its
// M x K tile over its instruction's grid_m waves (stored K x M, transpose_a, the same registers
// transposed). So a gemm's accumulator converted elementwise in a T.Parallel loop is the next
// gemm's A as it stands, with no exchange between lanes, when both split M over as many waves.
ir::Fragment mfma_register_a_layout(const ir::Gemm& op);

}  // namespace tilec::passes

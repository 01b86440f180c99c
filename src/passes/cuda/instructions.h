// CUDA's instruction choices, its hooks of select_instructions (passes/gpu/select_instructions.h):
//   - T.gemm: wgmma over whole warpgroups where the target has it (sm_90a, "tilec.wgmma"),
//     its shared operands in panels (tma_copies.h, panel_bytes_of); else mma.sync over warps,
//     a shared operand in gemm.h's swizzled tile -- unless a wgmma gemm or a TMA store keeps
//     that operand in panels; else element loops (fma). On sm_90a a gemm off wgmma logs at
//     DEBUG why, at its file:line:col.
//   - T.copy from shared to global memory: a TMA store where "tilec.tma_store" allows it (the
//     contiguous variant, a tile TMA can move: tma_copies.h); other copies between global and
//     shared memory: loops.
//   - T.atomic_add of a float32 shared tile into global memory: a TMA reduce-add where
//     "tilec.tma" allows it (the contiguous variant, a tile TMA can move), else loops.
//   - a copy between a fragment and shared memory: stmatrix for a wgmma accumulator into a
//     16-bit shared panel tile, ldmatrix for a 16-bit shared tile into a fragment laid out as
//     an mma.sync accumulator (where the target has it), else loops.
// select_instructions runs before warp_specialize, which turns only loops whose gemms all
// chose wgmma, and keeps every op's choice (the consumer threads it moves the ops to are the
// kernel's threads, which the choice was made for); warp_specialize and pipeline_loops make
// the copies they pipeline TMA loads and cp.async, and say so on the copy.
#pragma once

#include <memory>

#include "passes/gpu/select_instructions.h"

namespace tilec::passes {

std::unique_ptr<KernelInstructionChoice> cuda_kernel_instructions(const ir::Stmt& body, int threads,
                                                                  const PassContext& ctx);
ir::CopyInstruction cuda_fragment_copy(const ir::Copy& op, int threads, const PassContext& ctx);

}  // namespace tilec::passes

// Tile-level code as per-thread GPU code: the body of each KernelLaunch is run by every
// thread (KernelLaunch::thread_var = threadIdx.x).
//
// - Fragments become each thread's registers (a local array of its layout's slots).
// - T.Parallel nests run by their layout (op/parallel.h's nest_layout): thread t visits the
//   elements it holds; threads that only repeat another's elements sit out when the body
//   writes nothing of their own. Nests of symbolic extents take flat indices t, t + threads...
// - A T.gemm on the target's matrix cores, and a copy on an instruction of the target's own
//   (CUDA's ldmatrix, stmatrix, TMA), become the device calls the target's instruction
//   lowering says (passes/gpu/instruction_lowering.h: passes/cuda/, passes/hip/).
// - Reductions of fragments combine each thread's elements, then shuffle across lanes and
//   exchange through shared memory across warps.
// - Copies between global and shared memory move 16 bytes a thread (cp.async into shared)
//   when the tile allows and, checked at run time, the tensor's alignment and strides do;
//   element by element otherwise.
// Other tile ops must have been lowered to T.Parallel nests (lower_tile_ops) before.
#pragma once

#include "passes/gpu/instruction_lowering.h"
#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt lower_to_threads(const ir::Stmt& body, const PassContext& ctx);
// With the instruction lowering `lowering` rather than ctx.target's (what the pass above
// takes). A tile op on an instruction it does not lower is an internal error.
ir::Stmt lower_to_threads(const ir::Stmt& body, const PassContext& ctx, InstructionLowering lowering);

// lower_tile_ops for lower_to_threads: the tile ops it lowers itself (above) are left.
ir::Stmt lower_tile_ops_for_threads(const ir::Stmt& body, const PassContext& ctx);

}  // namespace tilec::passes

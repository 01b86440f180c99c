// Instruction selection: which instruction each GPU tile op runs on, written on the op
// (ir::Gemm::instruction, ir::Copy::instruction; ir/instruction.h). The passes after it read
// that choice and never make it again.
//
// select_instructions runs first on cuda and hip (after verify), and on hip again after
// stage_register_operands, which clears the choice of the gemms it rewrites:
//   - T.gemm: wgmma over whole warpgroups where the target has it (sm_90a, "tilec.wgmma"),
//     its shared operands in panels (tma_copies.h, panel_bytes_of); else MFMA over waves
//     (hip gfx90a, gfx940: passes/hip/mfma.h); else mma.sync over warps, a shared operand in
//     gemm.h's swizzled tile -- unless a wgmma gemm or a TMA store keeps that operand in
//     panels; else element loops (fma). On sm_90a a gemm off wgmma logs at DEBUG why, at its
//     file:line:col.
//   - T.copy from shared to global memory: a TMA store where "tilec.tma_store" allows it (the
//     contiguous variant, a tile TMA can move: tma_copies.h); other copies between global and
//     shared memory: loops.
// It runs before warp_specialize, which turns only loops whose gemms all chose wgmma, and
// keeps every op's choice (the consumer threads it moves the ops to are the kernel's threads,
// which the choice was made for); warp_specialize and pipeline_loops make the copies they
// pipeline TMA loads and cp.async, and say so on the copy.
//
// select_fragment_copies runs after infer_layout, since what a copy between a fragment and
// shared memory runs on depends on the fragment's layout: stmatrix for a wgmma accumulator
// into a 16-bit shared panel tile, ldmatrix for a 16-bit shared tile into a fragment laid out
// as an mma.sync accumulator (where the target has it), else loops.
//
// An op that already has a choice keeps it.
#pragma once

#include <optional>

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt select_instructions(const ir::Stmt& body, const PassContext& ctx);
ir::Stmt select_fragment_copies(const ir::Stmt& body, const PassContext& ctx);

// A gemm's M, N and K, when its A tile has constant 2-D extents and C is a whole 2-D buffer of
// constant shape.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
};
std::optional<GemmShape> gemm_shape(const ir::Gemm& op);

// Whether the two trailing dims of `r` are the whole of a shared buffer's last two dims (any
// dims before them taken at one index).
bool whole_shared_tile(const ir::BufferRegion& r);

// Whether `r` is the whole of a 2-D fragment (a gemm operand held in registers).
bool whole_fragment(const ir::BufferRegion& r);

}  // namespace tilec::passes

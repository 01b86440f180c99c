// Layouts for a kernel's on-chip buffers, before lowering to threads.
//
// Every fragment gets a Fragment (ir/layout.h), set on its Buffer:
//   1. T.gemm accumulators on the mma.sync path take the accumulator of gemm_ss over a warp
//      grid chosen for the tile (device/cuda/gemm.h); an operand in registers (gemm_rs,
//      gemm_sr) takes register_operand_layout;
//   2. fragments read or written outside T.Parallel loops and tile ops are replicated
//      (every thread holds every element, so scalar code can use them);
//   3. until nothing changes: the layout constraints of every other tile op (its unit's,
//      op/op.h) and of every T.Parallel nest (op/parallel.h) pass layouts on: a reduction's
//      result takes its source's layout without the reduced dim; a site (a nest, or an op
//      seen as one) runs by the layout of a fragment it touches, and the other fragments it
//      touches take that layout;
//   4. a fragment still without one takes the default (thread-major) layout (a constrained
//      site's first: see seed_of_constrained_site and seed_line_site), and step 3 runs again.
// Two demands on one fragment that disagree are a compile error naming both places.
//
// Shared tiles that T.gemm reads on the mma path are marked swizzled.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/layout.h"
#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt infer_layout(const ir::Stmt& body, const PassContext& ctx);

// The warp grid of an mma.sync gemm: warps_m x warps_n warps over an M x N accumulator.
struct WarpGrid {
  int64_t warps_m = 1, warps_n = 1;
};

// Whether T.gemm `op` runs on tensor cores -- gemm_ss (A and B in shared memory), gemm_rs
// (A a 16-bit fragment, all warps along M) or gemm_sr (B a 16-bit fragment, all warps along
// N) -- and over which warp grid for `threads` threads a block (op.policy: the squarest warp tiles, or all
// warps along M or along N; as many warps as split the tile that way). The target must have the
// mma.sync kind of the operands (ctx.target's features: fp8 needs sm_89 on).
std::optional<WarpGrid> mma_warp_grid(const ir::Gemm& op, int threads, const PassContext& ctx);

// A gemm's M, N and K, when its A tile has constant 2-D extents and C is a whole 2-D buffer of
// constant shape.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
};
std::optional<GemmShape> gemm_shape(const ir::Gemm& op);

// The grid of a wgmma gemm: groups_m x groups_n warpgroups of 128 threads.
struct WarpgroupGrid {
  int64_t groups_m = 1, groups_n = 1;
};

// Whether T.gemm `op` runs on wgmma (wgmma_gemm_ss / wgmma_gemm_rs of device/cuda/wgmma.h) and
// over which warpgroups: sm_90a with the pass config "tilec.wgmma" on; threads whole
// warpgroups; fp16/bf16 (A in shared memory or, not transposed, in registers), fp8 or tf32
// (float32; both K-major, in shared memory) operands into a float32 accumulator; shared
// operands panel tiles (panel_bytes_of); each warpgroup's part of C whole m64 strips and
// columns of 8 (for a B stored K x N, each instruction's columns starting a panel). When it
// doesn't, `why_not` (if given) says why in a phrase.
std::optional<WarpgroupGrid> wgmma_grid(const ir::Gemm& op, int threads, const PassContext& ctx,
                                        std::string* why_not = nullptr);

// Whether the two trailing dims of `r` are the whole of a shared buffer's last two dims (any
// dims before them taken at one index).
bool whole_shared_tile(const ir::BufferRegion& r);

// Whether `r` is the whole of a 2-D fragment (a gemm operand held in registers).
bool whole_fragment(const ir::BufferRegion& r);

// The width of the panels that shared buffer `b` is stored in when TMA or wgmma use it
// (device/cuda/panels.h): the widest of 128, 64, 32 and 16 bytes that divides its rows' bytes
// (so TMA's box and wgmma's swizzle mode span a panel), or 0 when it can't be stored so (dims
// not constant, rows not a multiple of 8, rows not whole 16-byte chunks).
int64_t panel_bytes_of(const ir::BufferNode& b);

// The layout of gemm `op`'s A (`a`) or B operand when it is a fragment (gemm_rs / gemm_sr).
ir::Fragment register_operand_layout(const ir::Gemm& op, const WarpGrid& grid, bool a);

// Whether T.copy `op` (a whole 2-D shared tile into a whole 16-bit fragment laid out as a
// gemm accumulator, rows of whole 16-byte multiples) loads with ldmatrix
// (ldmatrix_accumulator in device/cuda/gemm.h), and the accumulator's warp grid.
std::optional<WarpGrid> ldmatrix_copy_grid(const ir::Copy& op, int threads);

// Whether T.copy `op` (a whole fp32 fragment laid out as a wgmma accumulator into a whole 2-D
// 16-bit panel tile) stores with stmatrix (stmatrix_accumulator in device/cuda/wgmma.h), and
// the accumulator's warpgroup grid.
std::optional<WarpgroupGrid> stmatrix_copy_grid(const ir::Copy& op, int threads);

}  // namespace tilec::passes

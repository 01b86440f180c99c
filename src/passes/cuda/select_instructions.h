// Which instruction each GPU tile op runs on.
#pragma once

#include <optional>
#include <string>

#include "passes/pass.h"

namespace tilec::passes {

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

// Why gemm_ss / ldmatrix can't read a shared operand of `op` (its user layout is not the mma
// swizzle they address), or "".
std::string mma_swizzle_problem(const ir::Gemm& op);

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

// Whether T.copy `op` (a whole 2-D shared tile into a whole 16-bit fragment laid out as a
// gemm accumulator, rows of whole 16-byte multiples) loads with ldmatrix
// (ldmatrix_accumulator in device/cuda/gemm.h), and the accumulator's warp grid.
std::optional<WarpGrid> ldmatrix_copy_grid(const ir::Copy& op, int threads);

// Whether T.copy `op` (a whole fp32 fragment laid out as a wgmma accumulator into a whole 2-D
// 16-bit panel tile) stores with stmatrix (stmatrix_accumulator in device/cuda/wgmma.h), and
// the accumulator's warpgroup grid.
std::optional<WarpgroupGrid> stmatrix_copy_grid(const ir::Copy& op, int threads);

// Whether `copy` is a TMA store under ctx's pass configs ("tilec.tma_store", in the
// contiguous variant, whose strides are known).
bool is_tma_store(const ir::Copy& copy, const PassContext& ctx);

}  // namespace tilec::passes

// T.Pipelined loops on Hopper (sm_90a): the loop's tile copies from global memory become TMA
// copies into stage buffers completing on mbarriers, and (pass config
// "tilec.warp_specialize", on by default) a producer warpgroup issues them while the kernel's
// own threads, the consumers, compute.
//
// A loop qualifies when it is the kernel's only pipelined loop, sits in the kernel body
// through allocations and lets only, its producers (pipeline_stages.h) all copy a tile of a
// tensor whose strides are known multiples of 16 bytes (the contiguous variant) into a whole
// shared panel tile (tma_copies.h, panel_bytes_of) used only in the loop, and its gemms all chose
// wgmma (select_instructions.h; they keep their choices). The copies it makes TMA loads say so
// (ir::CopyInstructionKind::TmaLoad). It is warp-specialized when T, the kernel's threads,
// are whole warpgroups and the trip count reads no on-chip buffer (the producer runs none of
// the statements before the loop). Warp-specialized, with s stages, n iterations and T threads:
//
//   full[s][g], empty[s]: mbarriers (full: 1 arrival + the bytes of copy group g; empty: one a
//     consumer warp). The copies whose tiles the same body statement reads first are a group
//     (a GEMM's A and B: one; attention's K and V: two, read by its two gemms).
//   if thread_in(T, T + 128):            # the producer warpgroup (KernelLaunch::producer_threads)
//     setmaxnreg_dec<24>                 # pass config "tilec.setmaxnreg", for T >= 256
//     if thread_in(T, T + 1):
//       for i in 0..n-1: wait empty[i % s] (from round 1 on);
//                        for each g: expect_tx full[i % s][g]; g's TMA copies(i)
//   else:                                # threads 0..T-1; barriers here are bar.sync 1, T
//     setmaxnreg_inc<R>                  # R: what the producer gave up (240 for T = 256)
//     statements before the loop
//     for i in 0..n-1: the rest of the body on stage i % s, with wait full[i % s][g] right
//                      before group g's first reader; arrive empty[i % s]
//     statements after the loop
//
// Tile copies: a statement before the loop that copies a whole shared panel tile from global
// memory (attention's Q tile), into a buffer nothing else writes, is the producer's too. It
// issues the TMA load before its loop on an mbarrier pair of the copy's own, tile_full[c] and
// tile_empty[c]; the consumers wait on tile_full[c] right before the first statement that
// reads the tile.
//
// Persistent (pass config "tilec.persistent", on by default, with warp specialization): when the
// shared buffers fit side by side, the launch becomes one wave of blocks
// (KernelLaunch::persistent) and each branch loops over the grid's tiles, binding the block
// vars, then the lets around the loop that read them, for each:
//
//   for tile_iter in range(ceildiv(tiles - first, stride)):   # first, stride: blockIdx.x, gridDim.x
//     bx, by = the grid position of tile first + tile_iter * stride (T.use_swizzle's order)
//     ... the branch's work, with round r = tile_iter * n + i in place of i for stages and parities
//
// A trip count n that depends on the block (causal attention's) is counted instead: each
// branch keeps rounds_done[0], the rounds of its tiles so far, r = rounds_done[0] + i, and adds
// max(n, 0) after each tile's loop (n must then read nothing the loop writes).
//
// A tile copy's mbarriers then go through a phase a tile: the consumers arrive on tile_empty[c]
// after the last statement that reads the tile, and the producer waits for that before loading
// the next tile's, so that it loads it while they finish this one. A tile first read after the
// loop (attention's last V block) is loaded after the producer's loop.
//
// Without warp specialization, thread 0 issues the copies s iterations ahead and the block
// synchronizes after each iteration before refilling its stage. Other loops are left to
// pipeline_loops (cp.async).
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt warp_specialize(const ir::Stmt& body, const PassContext& ctx);

}  // namespace tilec::passes

// Registers moved between warpgroups with setmaxnreg (T.set_max_nreg; sm_90a). A block launches
// with registers_at_launch(threads) registers a thread, and setmaxnreg.dec gives some back to the
// block's pool, from which setmaxnreg.inc takes. An inc asks the pool, never the SM: when the
// warpgroups' counts add up to more than the block launched with, the growing warpgroup waits
// for registers that never come and the kernel hangs. check_register_moves refuses that kernel
// at compile time, at the T.set_max_nreg that grows; check_compiled_register_moves again once
// ptxas has counted the kernel's registers (runtime/cuda/cubin_registers.h), and refuses a move
// the wrong way, which the GPU stops with an illegal instruction.
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

// Registers a thread of a block of `threads` threads has at launch: the register file's 64 K
// over the block (over min_blocks blocks, T.annotate_min_blocks_per_sm), in steps of 8, at most
// 255 (what __launch_bounds__(threads, min_blocks) leaves ptxas).
int registers_at_launch(int threads, int min_blocks = 1);
// The registers a thread of a kernel must launch with for ptxas to compile an m64n256 wgmma with
// a float32 accumulator (it asks for 158, C7602); a kernel launched with fewer issues m64n128s
// (TILEC_WGMMA_MAX_N, device/cuda/wgmma.h).
inline constexpr int kWideWgmmaRegisters = 160;

// Each thread group's T.set_max_nreg counts (a group without one keeps registers_at_launch),
// times its threads, must fit in what the block launched with: a CompileError otherwise.
ir::Stmt check_register_moves(const ir::Stmt& body, const PassContext& ctx);

// Once ptxas has compiled the kernel (lowered `body`) and given it `registers` a thread, what each
// warp starts with: each T.set_max_nreg must move the way it says, a grow to at least what the
// threads hold and a drop to at most (the other way is an illegal instruction on the GPU). The
// block's pool stays what its bounds allow (registers_at_launch), whatever ptxas gave.
void check_compiled_register_moves(const ir::Stmt& body, int registers);

}  // namespace tilec::passes

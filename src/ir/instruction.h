// The instruction a GPU target runs a tile op on, written on the op (ir::Gemm::instruction,
// ir::Copy::instruction, ir::AtomicAdd::instruction) by the pass select_instructions (passes/gpu/select_instructions.h)
// and read by the passes after it, which never choose again.
//
// A choice says what the hardware does, not how a target spells it: the device calls it
// becomes are the target's instruction lowering's (passes/gpu/instruction_lowering.h).
#pragma once

#include <cstdint>
#include <string>

namespace tilec::ir {

enum class GemmInstructionKind {
  Unselected,  // no choice made yet (before select_instructions, and on the CPU)
  Fma,         // element loops on the scalar cores (lower_tile_ops' generic lowering)
  MmaSync,     // mma.sync over a grid of warps (device/cuda/gemm.h)
  Wgmma,       // wgmma over a grid of 128-thread warpgroups (device/cuda/wgmma.h)
  Mfma,        // AMD's matrix cores over a grid of waves (device/hip/mfma.h)
};

struct GemmInstruction {
  GemmInstructionKind kind = GemmInstructionKind::Unselected;
  // The grid the tile is split over: warps (mma.sync), warpgroups (wgmma) or waves (mfma).
  int64_t grid_m = 1, grid_n = 1;
  // The shape of one instruction (mma.sync m16n8k16, wgmma m64nNkK, mfma 16x16x16); 0 for Fma.
  int64_t inst_m = 0, inst_n = 0, inst_k = 0;
  // Which operand is read from registers (a fragment) rather than shared memory.
  bool a_in_registers = false, b_in_registers = false;
  // How each shared operand is stored: in panels of this many bytes (128, 64, 32 or 16:
  // device/cuda/panels.h, what wgmma reads) or, with `swizzled`, in gemm.h's swizzled 2-D
  // tile (what mma.sync's ldmatrix reads); 0 and false for an operand in registers.
  int64_t a_panel_bytes = 0, b_panel_bytes = 0;
  bool a_swizzled = false, b_swizzled = false;
  // wgmma over two consumer warpgroups that take turns issuing (pingpong_warpgroups.h): the
  // first of the two named barriers they pass the turn on, when it waits for the turn before
  // issuing (take_turn) and hands it on after (pass_turn); 0 when it doesn't.
  int64_t take_turn = 0, pass_turn = 0;

  bool selected() const { return kind != GemmInstructionKind::Unselected; }
  // Whether it reads shared memory through the async proxy (wgmma), so that generic stores
  // before it need a proxy fence (fence_proxy_async) as well as the barrier.
  bool reads_through_async_proxy() const { return kind == GemmInstructionKind::Wgmma; }
  // Whether lower_to_threads calls a tensor-core routine for it (else it is element loops).
  bool on_matrix_cores() const {
    return kind == GemmInstructionKind::MmaSync || kind == GemmInstructionKind::Wgmma ||
           kind == GemmInstructionKind::Mfma;
  }
  bool operator==(const GemmInstruction&) const = default;
};

enum class CopyInstructionKind {
  Unselected,  // no choice made yet (before select_instructions, and on the CPU)
  Loops,       // element loops, vectorized where the layout and alignment allow (nest_vectors)
  CpAsync,     // cp.async into shared memory, completing at a later wait (pipeline_loops)
  TmaLoad,     // a TMA load of a whole shared panel tile, completing on ir::Copy::barrier
  TmaStore,    // a TMA store of a whole shared panel tile, issued by one thread
  TmaReduceAdd,  // T.atomic_add of a whole shared panel tile into global memory by TMA, issued by one thread
  Ldmatrix,    // ldmatrix from a shared tile into a fragment laid out as an mma.sync accumulator
  Stmatrix,    // stmatrix of a fragment laid out as a wgmma accumulator into a shared panel tile
};

struct CopyInstruction {
  CopyInstructionKind kind = CopyInstructionKind::Unselected;
  // Ldmatrix: the accumulator's warp grid; Stmatrix: its warpgroup grid.
  int64_t grid_m = 1, grid_n = 1;
  // TmaLoad, TmaStore, TmaReduceAdd, Stmatrix: the width of the shared tile's panels (128, 64, 32 or 16
  // bytes); TMA swizzles by it, but for 16 bytes, which has no swizzle.
  int64_t panel_bytes = 0;

  bool selected() const { return kind != CopyInstructionKind::Unselected; }
  // Whether the copy completes later than it is issued (the barriers after it must wait for it).
  bool asynchronous() const { return kind == CopyInstructionKind::CpAsync || kind == CopyInstructionKind::TmaLoad; }
  bool is_tma() const {
    return kind == CopyInstructionKind::TmaLoad || kind == CopyInstructionKind::TmaStore ||
           kind == CopyInstructionKind::TmaReduceAdd;
  }
  // Whether it reads shared memory through the async proxy (a TMA store or reduce-add), as a
  // wgmma gemm does.
  bool reads_through_async_proxy() const {
    return kind == CopyInstructionKind::TmaStore || kind == CopyInstructionKind::TmaReduceAdd;
  }
  // Whether lower_to_threads hands the copy to the target's instruction lowering
  // (passes/gpu/instruction_lowering.h), rather than running it as element or vector accesses.
  bool on_target_instruction() const {
    return is_tma() || kind == CopyInstructionKind::Ldmatrix || kind == CopyInstructionKind::Stmatrix;
  }
  bool operator==(const CopyInstruction&) const = default;
};

// How the IR printer shows a choice after its op, e.g. "wgmma m64n256k16, A in registers, 2x1
// warpgroups" or "tma load, 128-byte swizzle"; "" when unselected.
std::string to_string(const GemmInstruction& instruction);
std::string to_string(const CopyInstruction& instruction);

}  // namespace tilec::ir

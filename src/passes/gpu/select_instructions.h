// Instruction selection: which instruction each GPU tile op runs on, written on the op
// (ir::Gemm::instruction, ir::Copy::instruction, ir::AtomicAdd::instruction; ir/instruction.h). The passes after it read
// that choice and never make it again.
//
// select_instructions runs first on cuda and hip (after verify), and on hip again after
// stage_register_operands, which clears the choice of the gemms it rewrites. It gives every
// T.gemm an instruction, and every copy between global and shared memory and every T.atomic_add
// of a shared tile into global memory one; copies of
// fragments wait for select_fragment_copies, which runs after infer_layout, since what they
// run on depends on the fragment's layout. An op that already has a choice keeps it.
//
// The pass is target-neutral; the choices are the target's, made by its hooks:
//
//   cuda   passes/cuda/instructions.h   wgmma, mma.sync, TMA stores, stmatrix, ldmatrix
//   hip    passes/hip/instructions.h    MFMA
//
// A third target adds its hook file and a line in instruction_hooks (passes/pipeline.cc).
#pragma once

#include <memory>
#include <optional>

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt select_instructions(const ir::Stmt& body, const PassContext& ctx);
ir::Stmt select_fragment_copies(const ir::Stmt& body, const PassContext& ctx);

// A target's choices for the tile ops of one kernel, made before any is written: a choice may
// depend on what other ops of the kernel demand of a buffer (on CUDA, a shared tile that wgmma
// or a TMA store keeps in panels is no mma.sync operand).
class KernelInstructionChoice {
 public:
  virtual ~KernelInstructionChoice() = default;
  // The instruction of T.gemm `op`: the target's matrix cores, else element loops (Fma).
  virtual ir::GemmInstruction gemm(const ir::Gemm& op) const = 0;
  // The instruction of a copy between global and shared memory (no fragment): loops at least.
  virtual ir::CopyInstruction copy(const ir::Copy& op) const = 0;
  // The instruction of T.atomic_add of a shared tile into global memory: loops, unless the
  // target adds a whole tile at once.
  virtual ir::CopyInstruction atomic_add(const ir::AtomicAdd&) const { return {.kind = ir::CopyInstructionKind::Loops}; }
};

struct InstructionHooks {
  // The choices for the kernel `body` of `threads` threads a block.
  std::unique_ptr<KernelInstructionChoice> (*kernel)(const ir::Stmt& body, int threads, const PassContext& ctx);
  // The instruction of a copy between a fragment and shared memory, its fragment laid out.
  ir::CopyInstruction (*fragment_copy)(const ir::Copy& op, int threads, const PassContext& ctx);
};

// The hooks of GPU target `target`. Defined in passes/pipeline.cc, beside each target's pass
// list.
InstructionHooks instruction_hooks(const Target& target);

// What the targets' choices ask of a gemm's operands:

// A gemm's M, N and K, when its A tile has constant 2-D extents and C is a whole 2-D buffer of
// constant shape.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  // No product to compute (a zero extent): tensor cores take no such gemm; its loops run over
  // nothing (K = 0 clears C where the gemm asks for it).
  bool empty() const { return m < 1 || n < 1 || k < 1; }
};
std::optional<GemmShape> gemm_shape(const ir::Gemm& op);

// Whether the two trailing dims of `r` are the whole of a shared buffer's last two dims (any
// dims before them taken at one index).
bool whole_shared_tile(const ir::BufferRegion& r);

// Whether `r` is the whole of a 2-D fragment (a gemm operand held in registers).
bool whole_fragment(const ir::BufferRegion& r);

}  // namespace tilec::passes

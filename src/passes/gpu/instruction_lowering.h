// The seam between lower_to_threads and a target's instructions.
//
// lower_to_threads (passes/gpu/lower_to_threads.h) is target-neutral: fragments as registers,
// T.Parallel nests by their layouts, reductions, copies between global and shared memory as
// element or vector accesses. A tile op select_instructions put on an instruction of the
// target's own (a gemm on the matrix cores, a copy on ldmatrix, stmatrix or TMA, a tile
// T.atomic_add on TMA) becomes the
// target's device calls, as its hooks say:
//
//   cuda   passes/cuda/lower_instructions.h   mma.sync, wgmma; ldmatrix, stmatrix, TMA; TMA reduce-add
//   hip    passes/hip/lower_instructions.h    MFMA
//
// A third target adds its hook file and a line in instruction_lowering (passes/pipeline.cc).
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"
#include "target/target.h"

namespace tilec::passes {

// What lower_to_threads gives a hook: the block's thread index, the lowered form of the tile
// code's expressions, and the registers, tiles and tensor maps the op's operands become.
class InstructionLoweringContext {
 public:
  virtual ~InstructionLoweringContext() = default;
  // The thread's index in its block (threadIdx.x).
  virtual const ir::Expr& thread_index() const = 0;
  // `e` (of the tile code: a region's min, a barrier) as the lowered code reads it.
  virtual ir::Expr lowered(const ir::Expr& e) = 0;
  // The address of this thread's registers of `fragment` (laid out by its Fragment).
  virtual ir::Expr registers(const ir::Buffer& fragment) const = 0;
  // The address of the first element of the trailing 2-D tile of shared region `r`.
  virtual ir::Expr tile_address(const ir::BufferRegion& r) = 0;
  // Every register of `fragment` set to `value`.
  virtual ir::Stmt fill_registers(const ir::Buffer& fragment, const ir::Expr& value) = 0;
  // The index of `spec` among the kernel's TMA tensor maps (KernelLaunch::tensor_maps), added
  // when it is new.
  virtual int64_t tensor_map(const ir::TensorMapSpec& spec) = 0;
};

// A target's hooks: `op` on the instruction select_instructions chose for it (op.instruction)
// as device calls, or nullopt when the target has no such instruction (lower_to_threads then
// stops with an internal error naming it). A null hook: the target has no instructions of that
// kind of op. lower_to_threads places what a hook returns at the op's source line.
struct InstructionLowering {
  std::optional<ir::Stmt> (*gemm)(const ir::Gemm& op, InstructionLoweringContext& ctx) = nullptr;
  std::optional<ir::Stmt> (*copy)(const ir::Copy& op, InstructionLoweringContext& ctx) = nullptr;
  std::optional<ir::Stmt> (*atomic_add)(const ir::AtomicAdd& op, InstructionLoweringContext& ctx) = nullptr;
};

// The hooks of GPU target `target`. Defined in passes/pipeline.cc, beside each target's pass
// list.
InstructionLowering instruction_lowering(const Target& target);

// What the targets' gemm lowerings share:

// "M, N, K, ": the leading template arguments of the matrix-core gemm routines.
std::string gemm_shape_arguments(const ir::Gemm& op);

// "true" or "false", as a template argument.
inline std::string template_bool(bool b) { return b ? "true" : "false"; }

// The call routine(A, B, C, tid) of a matrix-core gemm: an operand the instruction reads from
// registers by the address of the thread's registers, else by its tile's; tid the thread's index
// among those the gemm is spread over (a T.ws group's own); C's registers cleared first when
// `op` clears the accumulator, unless the routine `clears_itself` (wgmma's scale-d).
ir::Stmt matrix_core_gemm_call(const ir::Gemm& op, const std::string& routine, InstructionLoweringContext& ctx,
                               bool clears_itself = false);

}  // namespace tilec::passes

#include "passes/cuda/lower_instructions.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "ir/device_calls.h"
#include "ir/region.h"
#include "ir/shared_layout.h"
#include "ir/simplify.h"

namespace tilec::passes {
namespace {

using ir::Expr;
using ir::Stmt;

// gemm_ss / gemm_rs / gemm_sr (device/cuda/gemm.h) over the warps of op's instruction.
Stmt mma_sync_gemm(const ir::Gemm& op, InstructionLoweringContext& ctx) {
  const ir::GemmInstruction& in = op.instruction;
  std::string shape = gemm_shape_arguments(op);
  std::string name = in.a_in_registers
                         ? "gemm_rs<" + shape + std::to_string(in.grid_m) + ", " + template_bool(op.transpose_b) +
                               ", " + template_bool(in.b_swizzled) + ">"
                     : in.b_in_registers
                         ? "gemm_sr<" + shape + std::to_string(in.grid_n) + ", " + template_bool(op.transpose_a) +
                               ", " + template_bool(in.a_swizzled) + ">"
                         : "gemm_ss<" + shape + std::to_string(in.grid_m) + ", " + std::to_string(in.grid_n) + ", " +
                               template_bool(op.transpose_a) + ", " + template_bool(op.transpose_b) + ", " +
                               template_bool(in.a_swizzled) + ", " + template_bool(in.b_swizzled) + ">";
  return matrix_core_gemm_call(op, name, ctx);
}

// wgmma_gemm_ss / wgmma_gemm_rs (device/cuda/wgmma.h) over the warpgroups of op's instruction.
Stmt wgmma_gemm(const ir::Gemm& op, InstructionLoweringContext& ctx) {
  const ir::GemmInstruction& groups = op.instruction;
  std::string shape = gemm_shape_arguments(op);
  const std::string panel_b = std::to_string(groups.b_panel_bytes);
  std::string name = groups.a_in_registers
                         ? "wgmma_gemm_rs<" + shape + std::to_string(groups.grid_m) + ", " +
                               template_bool(op.transpose_b) + ", " + panel_b + ">"
                         : "wgmma_gemm_ss<" + shape + std::to_string(groups.grid_m) + ", " +
                               std::to_string(groups.grid_n) + ", " + template_bool(op.transpose_a) + ", " +
                               template_bool(op.transpose_b) + ", " + std::to_string(groups.a_panel_bytes) + ", " +
                               panel_b + ">";
  if (groups.take_turn || groups.pass_turn || op.wg_wait < 0 || op.clear_accum)  // TakeTurn, PassTurn, Async, Clear
    name.insert(name.size() - 1, ", " + std::to_string(groups.take_turn) + ", " + std::to_string(groups.pass_turn) +
                                     ", " + template_bool(op.wg_wait < 0) + ", " + template_bool(op.clear_accum));
  // clear_accum is the wgmmas' scale-d: no zeros written into C first.
  return matrix_core_gemm_call(op, name, ctx, /*clears_itself=*/true);
}

// tilec_cuda::name<rows, cols, args...>(the fragment's registers, the tile's address): the
// ldmatrix / stmatrix copies between a whole fragment and a whole 2-D shared tile.
Stmt matrix_copy(const std::string& name, const ir::BufferRegion& fragment, const ir::BufferRegion& tile,
                 const std::vector<std::string>& args, const SourceLoc& loc, InstructionLoweringContext& ctx) {
  auto shape = ir::squeezed_extents(fragment);
  int64_t rows, cols;
  ir::is_const_int(shape[0], &rows);
  ir::is_const_int(shape[1], &cols);
  std::string call = name + "<" + std::to_string(rows) + ", " + std::to_string(cols);
  for (const std::string& a : args) call += ", " + a;
  return ir::device_call(call + ">", {ctx.registers(fragment.buffer), ctx.tile_address(tile), ctx.thread_index()},
                         loc);
}

// A TMA transfer between `global` and the shared panel tile `shared`, one instruction (`call`:
// tma_load, tma_store or tma_reduce_add) a panel, the box of the tensor map being the panel's
// rows x its width (1 along the region's other dims), swizzled as the panel is. A load
// (warp_specialize made it) is issued by the thread that reaches it and completes on `barrier`,
// multicast to the cluster's blocks of the ranks `multicast` sets where it is not 0, its lines
// in L2 at the priority `eviction` gives (tma_load<Policy>);
// a store or reduce-add (tma_copies.h) is issued and committed by thread 0, which waits for the
// tile to be read where insert_barriers put tma_store_wait_read: before the barrier that lets
// the tile be written again.
Stmt tma_transfer(const std::string& call, const ir::BufferRegion& global, const ir::BufferRegion& shared,
                  int64_t panel_bytes, const Expr& barrier, int64_t multicast, ir::EvictionPolicy eviction,
                  const SourceLoc& loc, InstructionLoweringContext& ctx) {
  const bool load = call == "tma_load";
  if (load != barrier.defined()) throw std::logic_error("lower_to_threads: a TMA load completes on a barrier");
  const size_t rank = global.region.size(), srank = shared.region.size();
  int64_t cols;  // whole panels of the tile, from column shared.region.back().min on
  ir::is_const_int(ir::simplify(shared.region.back().extent), &cols);
  if (panel_bytes == 0 || panel_bytes != ir::panel_width(*shared.buffer))
    throw std::logic_error("lower_to_threads: a TMA copy of a tile not in its instruction's panels");
  // A box a panel; the unswizzled panels of a one-row tile lie end to end, so its boxes take
  // as many of them as a box can (256 elements), in whole 128-byte lines (8 panels) so that
  // each box starts on one (tma_copies.cc panel_width_that_fits).
  int64_t rows = 0;
  ir::is_const_int(ir::simplify(shared.buffer->shape[srank - 2]), &rows);
  const int64_t panel = panel_bytes / shared.buffer->dtype.bytes();
  int64_t panel_run = 1;
  if (panel_bytes == 16 && rows == 1)
    for (int64_t run = 256 / panel / 8 * 8; run >= 8 && panel_run == 1; run -= 8)
      if (cols % (run * panel) == 0) panel_run = run;
  const int64_t box_cols = panel * panel_run;
  ir::TensorMapSpec spec{global.buffer, {}, panel_bytes == 16 ? 0 : panel_bytes};
  for (size_t d = rank; d-- > 0;) {
    int64_t extent;
    if (!ir::is_const_int(ir::simplify(global.region[d].extent), &extent))
      throw std::logic_error("lower_to_threads: a TMA copy of a symbolic extent");
    spec.box.push_back(d + 1 == rank ? box_cols : extent);
  }
  Expr map = ir::make_call(DType::UInt64, ir::kTensorMap, {ir::make_int(ctx.tensor_map(spec))});
  std::vector<Stmt> copies;
  for (int64_t b = 0; b < cols / box_cols; ++b) {
    const int64_t p = b * panel_run;
    std::vector<Expr> at;
    for (size_t d = 0; d < srank; ++d)
      at.push_back(d + 2 < srank ? ctx.lowered(shared.region[d].min) : ir::make_int(0));
    Expr first = ctx.lowered(shared.region.back().min);
    at.back() = ir::simplify(ir::make_Add(first, ir::make_int(p * panel, first->dtype)));
    std::vector<Expr> args = {map, ir::address_of(shared.buffer, at)};
    if (load) args.push_back(ctx.lowered(barrier));
    if (multicast) args.push_back(ir::make_int(multicast, DType::UInt16));
    for (size_t d = rank; d-- > 0;) {
      Expr c = ctx.lowered(global.region[d].min);
      if (d + 1 == rank) c = ir::make_Add(c, ir::make_int(p * panel, c->dtype));
      args.push_back(ir::simplify(ir::make_cast(DType::Int32, c)));
    }
    const std::string hint =
        eviction == ir::EvictionPolicy::Normal ? "" : "<" + std::to_string(static_cast<int>(eviction)) + ">";
    copies.push_back(ir::device_call((multicast ? call + "_multicast" : call) + hint, args, loc));
  }
  if (load) return ir::make_seq(copies);
  copies.push_back(ir::device_call("tma_store_commit", {}, loc));
  const Expr& tid = ctx.thread_index();
  return ir::make_if(ir::make_EQ(tid, ir::make_int(0, tid->dtype)), ir::make_seq(copies));
}

Stmt tma_copy(const ir::Copy& op, InstructionLoweringContext& ctx) {
  const bool load = op.instruction.kind == ir::CopyInstructionKind::TmaLoad;
  return load ? tma_transfer("tma_load", op.src, op.dst, op.instruction.panel_bytes, op.barrier, op.multicast,
                             op.eviction, op.loc, ctx)
              : tma_transfer("tma_store", op.dst, op.src, op.instruction.panel_bytes, Expr(), 0,
                             ir::EvictionPolicy::Normal, op.loc, ctx);
}

}  // namespace

std::optional<Stmt> cuda_lower_gemm(const ir::Gemm& op, InstructionLoweringContext& ctx) {
  switch (op.instruction.kind) {
    case ir::GemmInstructionKind::MmaSync: return mma_sync_gemm(op, ctx);
    case ir::GemmInstructionKind::Wgmma: return wgmma_gemm(op, ctx);
    default: return std::nullopt;
  }
}

std::optional<Stmt> cuda_lower_copy(const ir::Copy& op, InstructionLoweringContext& ctx) {
  const ir::CopyInstruction& in = op.instruction;
  switch (in.kind) {
    case ir::CopyInstructionKind::TmaLoad:
    case ir::CopyInstructionKind::TmaStore: return tma_copy(op, ctx);
    case ir::CopyInstructionKind::Stmatrix:
      return matrix_copy("stmatrix_accumulator", op.src, op.dst,
                         {std::to_string(in.grid_m), std::to_string(in.grid_n), std::to_string(in.panel_bytes)},
                         op.loc, ctx);
    case ir::CopyInstructionKind::Ldmatrix:
      return matrix_copy("ldmatrix_accumulator", op.dst, op.src,
                         {std::to_string(in.grid_m), std::to_string(in.grid_n),
                          template_bool(ir::mma_swizzled(*op.src.buffer))},
                         op.loc, ctx);
    default: return std::nullopt;
  }
}

std::optional<Stmt> cuda_lower_atomic_add(const ir::AtomicAdd& op, InstructionLoweringContext& ctx) {
  if (op.instruction.kind != ir::CopyInstructionKind::TmaReduceAdd) return std::nullopt;
  return tma_transfer("tma_reduce_add", op.dst, op.src, op.instruction.panel_bytes, Expr(), 0,
                      ir::EvictionPolicy::Normal, op.loc, ctx);
}

}  // namespace tilec::passes

#include "passes/cuda/instructions.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_set>

#include "base/log.h"
#include "ir/layout.h"
#include "ir/mutator.h"
#include "ir/region.h"
#include "ir/shared_layout.h"
#include "ir/simplify.h"
#include "ir/visitor.h"
#include "op/layout_constraints.h"
#include "passes/gpu/select_instructions.h"
#include "passes/cuda/tma_copies.h"

namespace tilec::passes {
namespace {

using ir::Expr;
using ir::Stmt;
using op::const_extents;
using op::const_shape;
using op::is_fragment;

// The mma.sync kind for operands of type t (tensor_core_k says which types have one).
TargetFeature mma_kind(DType t) {
  if (t.bytes() == 1) return TargetFeature::MmaFp8;
  return t == DType::Float32 ? TargetFeature::MmaTf32 : TargetFeature::MmaF16;
}

std::string gemm_operand_name(const ir::BufferRegion& r, bool a) {
  return std::string(a ? "A" : "B") + " ('" + r.buffer->name + "')";
}

// Why gemm_ss / ldmatrix can't read a shared operand of `op` (its user layout is not the mma
// swizzle they address), or "".
std::string mma_swizzle_problem(const ir::Gemm& op) {
  for (bool a : {true, false}) {
    const ir::BufferRegion& r = a ? op.a : op.b;
    if (r.buffer->scope != ir::MemoryScope::Shared || !ir::has_user_layout(*r.buffer)) continue;
    const std::vector<int64_t>& shape = r.buffer->layout->shape();
    const size_t rank = shape.size();
    const bool whole_lines = rank >= 2 && shape[rank - 2] * shape[rank - 1] * r.buffer->dtype.bytes() % 128 == 0;
    if (!whole_lines || ir::user_layout_differs(*r.buffer, *ir::mma_swizzle_of(*r.buffer)))
      return gemm_operand_name(r, a) + " has " + ir::user_layout_origin(*r.buffer) +
             ", not the mma swizzle that gemm_ss reads";
  }
  return "";
}

// The warp grid of an mma.sync gemm: warps_m x warps_n warps over an M x N accumulator.
struct WarpGrid {
  int64_t warps_m = 1, warps_n = 1;
};

// The grid of a wgmma gemm: groups_m x groups_n warpgroups of 128 threads.
struct WarpgroupGrid {
  int64_t groups_m = 1, groups_n = 1;
};

// The K of one tensor-core instruction (mma.sync or wgmma) for operands of type t (fp32: tf32),
// or 0 when there is none.
int64_t tensor_core_k(DType t) {
  switch (t.code()) {
    case DType::Float16: case DType::BFloat16: return 16;
    case DType::Float32: return 8;
    case DType::Float8E4M3: case DType::Float8E5M2: return 32;
    default: return 0;
  }
}

// The width of one wgmma instruction over a warpgroup's `cols` columns (device/cuda/wgmma.h,
// detail::wgmma_width). A kernel launched with too few registers for an m64n256 issues it as
// m64n128s (TILEC_WGMMA_MAX_N), the same accumulator: known only once warp specialization has
// set the block's threads, after this choice.
int64_t wgmma_width(int64_t cols) {
  int64_t w = std::min<int64_t>(cols, 256);
  while (w > 0 && cols % w != 0) w -= 8;
  return w;
}

// Whether T.gemm `op` runs on tensor cores -- gemm_ss (A and B in shared memory), gemm_rs
// (A a 16-bit fragment, all warps along M) or gemm_sr (B a 16-bit fragment, all warps along
// N) -- and over which warp grid for `threads` threads a block (op.policy: the squarest warp tiles, or all
// warps along M or along N; as many warps as split the tile that way). The target must have the
// mma.sync kind of the operands (ctx.target's features: fp8 needs sm_89 on).
std::optional<WarpGrid> mma_warp_grid(const ir::Gemm& op, int threads, const PassContext& ctx) {
  if (!is_fragment(op.c.buffer) || op.c.buffer->dtype != DType::Float32) return std::nullopt;
  // One operand in registers (gemm_rs, gemm_sr): 16-bit, laid out as an accumulator of its
  // M x K (N x K) shape over the warps, which is the mma operand register for register
  // (device/cuda/gemm.h, operand_layout below).
  const bool a_in_registers = whole_fragment(op.a), b_in_registers = whole_fragment(op.b);
  if (a_in_registers ? op.a.buffer->dtype.bytes() != 2 : !whole_shared_tile(op.a)) return std::nullopt;
  if (b_in_registers ? a_in_registers || op.b.buffer->dtype.bytes() != 2 : !whole_shared_tile(op.b))
    return std::nullopt;
  DType t = op.a.buffer->dtype;
  if (op.b.buffer->dtype != t) return std::nullopt;
  const int64_t kstep = tensor_core_k(t);
  if (kstep == 0 || !ctx.target.has(mma_kind(t))) return std::nullopt;
  auto shape = gemm_shape(op);
  if (!shape || shape->empty() || shape->k % kstep != 0) return std::nullopt;
  if (!mma_swizzle_problem(op).empty()) return std::nullopt;
  const int64_t m = shape->m, n = shape->n;
  // The most warps (of the block's, halving) that split the tile as the policy says.
  for (int64_t warps = threads / 32; warps >= 1; warps /= 2) {
    std::optional<WarpGrid> best;
    for (int64_t wm = 1; wm <= warps; ++wm) {
      if (warps % wm) continue;
      int64_t wn = warps / wm;
      if (m % (16 * wm) || n % (8 * wn)) continue;
      if ((op.policy == ir::WarpPolicy::FullRow && wn != 1) || (op.policy == ir::WarpPolicy::FullCol && wm != 1))
        continue;
      if (a_in_registers && wn != 1) continue;  // each warp holds whole rows of A
      if (b_in_registers && (wm != 1 || n % (16 * wn))) continue;  // ... whole columns of B
      auto score = [&](const WarpGrid& g) { return std::abs(m / g.warps_m - n / g.warps_n); };
      WarpGrid g{wm, wn};
      if (!best || score(g) < score(*best)) best = g;
    }
    if (best) return best;
  }
  return std::nullopt;
}


// Why shared operand `r` of a gemm can't be read by wgmma, or "".
std::string wgmma_operand_problem(const ir::BufferRegion& r, bool a) {
  if (!whole_shared_tile(r) && !whole_panel_columns(r))
    return gemm_operand_name(r, a) + " is not a whole shared tile or whole panels of one";
  if (const int64_t width = panel_width_that_fits(*r.buffer); width && !panel_bytes_of(*r.buffer))
    return gemm_operand_name(r, a) + " has " + ir::user_layout_origin(*r.buffer) + ", not the " +
           std::to_string(width) + "-byte panels wgmma reads";
  if (!panel_bytes_of(*r.buffer))
    return gemm_operand_name(r, a) + " can't be stored in panels (its tile needs constant dims, rows a multiple "
                                     "of 8 and a row of whole 16-byte chunks)";
  return "";
}

// Whether T.gemm `op` runs on wgmma (wgmma_gemm_ss / wgmma_gemm_rs of device/cuda/wgmma.h) and
// over which warpgroups: sm_90a with the pass config "tilec.wgmma" on; threads whole
// warpgroups; fp16/bf16 (A in shared memory or, not transposed, in registers), fp8 or tf32
// (float32; both K-major, in shared memory) operands into a float32 accumulator; shared
// operands panel tiles (panel_bytes_of); each warpgroup's part of C whole m64 strips and
// columns of 8 (for a B stored K x N, each instruction's columns starting a panel). When it
// doesn't, `why_not` (if given) says why in a phrase.
std::optional<WarpgroupGrid> wgmma_grid(const ir::Gemm& op, int threads, const PassContext& ctx, std::string* why_not = nullptr) {
  std::string ignored;
  std::string& why = why_not ? *why_not : ignored;
  if (!hopper_feature(ctx, "tilec.wgmma")) {
    why = "wgmma needs a target that has it (sm_90a) and the pass config tilec.wgmma on";
    return std::nullopt;
  }
  if (threads % 128 != 0) {
    why = "the block's " + std::to_string(threads) + " threads are not whole warpgroups of 128";
    return std::nullopt;
  }
  if (!is_fragment(op.c.buffer) || op.c.buffer->dtype != DType::Float32) {
    why = "the accumulator C ('" + op.c.buffer->name + "') is not a float32 fragment";
    return std::nullopt;
  }
  const bool a_in_registers = whole_fragment(op.a);
  DType t = op.a.buffer->dtype;
  if (op.b.buffer->dtype != t) {
    why = std::string("A and B have different dtypes (") + t.name() + ", " + op.b.buffer->dtype.name() + ")";
    return std::nullopt;
  }
  // fp16 / bf16 k16, tf32 (float32 operands) k8 and fp8 k32: each k step is 32 bytes of a row.
  const int64_t kstep = tensor_core_k(t);
  if (kstep == 0) {
    why = std::string("wgmma has no ") + t.name() + " operands";
    return std::nullopt;
  }
  why = wgmma_operand_problem(op.b, false);
  if (why.empty() && a_in_registers && (op.transpose_a || t.bytes() != 2))
    why = "A ('" + op.a.buffer->name + "') in registers must be 16-bit and not transposed";
  if (why.empty() && !a_in_registers) why = wgmma_operand_problem(op.a, true);
  if (!why.empty()) return std::nullopt;
  // Only 16-bit operands may be MN-major (imm-trans-a / imm-trans-b).
  if (t.bytes() != 2 && (op.transpose_a || !op.transpose_b)) {
    why = std::string(t == DType::Float32 ? "tf32" : "fp8") + " wgmma reads K-major operands only: A stored M x K "
          "and B stored N x K (transpose_B=True)" + (op.transpose_a ? "; A is stored K x M" : "; B is stored K x N");
    return std::nullopt;
  }
  auto shape = gemm_shape(op);
  if (!shape || shape->empty() || shape->k % kstep != 0) {
    why = !shape         ? std::string("the gemm's shape is not constant")
          : shape->empty() ? std::string("the gemm is empty")
                           : "K = " + std::to_string(shape->k) + " is not a multiple of the instruction's k (" +
                                 std::to_string(kstep) + ")";
    return std::nullopt;
  }
  const int64_t m = shape->m, n = shape->n;
  // A B stored K x N is read by each instruction from the first column of a panel.
  const int64_t panel = op.transpose_b ? 0 : panel_bytes_of(*op.b.buffer) / t.bytes(), groups = threads / 128;
  std::vector<int64_t> orders;  // groups_m, most first (FullCol: fewest first)
  for (int64_t gm = groups; gm >= 1; --gm) orders.push_back(gm);
  if (op.policy == ir::WarpPolicy::FullCol) std::reverse(orders.begin(), orders.end());
  // The policy's grids first; where none of them fits, any grid, as TileLang's partition takes the
  // policy as a preference (FullRow over 2 warpgroups of a 64-row tile splits its columns).
  for (bool follow_policy : {true, false}) {
    for (int64_t gm : orders) {
      if (groups % gm) continue;
      int64_t gn = groups / gm;
      if (m % (64 * gm) || n % (8 * gn) || (a_in_registers && gn != 1)) continue;
      if (follow_policy &&
          ((op.policy == ir::WarpPolicy::FullRow && gn != 1) || (op.policy == ir::WarpPolicy::FullCol && gm != 1)))
        continue;
      int64_t wn = n / gn, w = wgmma_width(wn);
      if (panel && ((gn > 1 && wn % panel) || (w != wn && w % panel))) continue;
      if (!follow_policy)
        log(LogLevel::Debug, op.loc.str() + ": T.gemm's policy " + ir::warp_policy_name(op.policy) + " fits no grid of " +
                                 std::to_string(groups) + " warpgroups over its " + std::to_string(m) + " x " +
                                 std::to_string(n) + " tile on wgmma: " + std::to_string(gm) + " x " +
                                 std::to_string(gn) + " instead");
      return WarpgroupGrid{gm, gn};
    }
    if (op.policy == ir::WarpPolicy::Square) break;
  }
  why = "no grid of the " + std::to_string(groups) + " warpgroups splits the " + std::to_string(m) + " x " +
        std::to_string(n) + " tile into m64 strips" + (a_in_registers ? " (A in registers: all along M)" : "") +
        (panel ? " with each instruction's columns starting a " + std::to_string(panel) +
                     "-column panel of B (stored K x N)"
               : "");
  return std::nullopt;
}

// Whether T.copy `op` (a whole 2-D shared tile into a whole 16-bit fragment laid out as a
// gemm accumulator, rows of whole 16-byte multiples) loads with ldmatrix
// (ldmatrix_accumulator in device/cuda/gemm.h), and the accumulator's warp grid.
std::optional<WarpGrid> ldmatrix_copy_grid(const ir::Copy& op, int threads) {
  const ir::Buffer& dst = op.dst.buffer;
  if (!whole_fragment(op.dst) || !whole_shared_tile(op.src) || op.src.region.size() != 2 || !dst->fragment ||
      (op.src.buffer->layout && !ir::mma_swizzled(*op.src.buffer)) ||
      dst->dtype.bytes() != 2 || op.src.buffer->dtype != dst->dtype)
    return std::nullopt;
  auto shape = const_shape(dst);
  if (shape[1] * 2 % 16 != 0) return std::nullopt;
  for (int64_t warps = threads / 32; warps >= 1; warps /= 2)
    for (int64_t wm = 1; wm <= warps; ++wm) {
      if (warps % wm || shape[0] % (16 * wm) || shape[1] % (8 * (warps / wm))) continue;
      if (*dst->fragment == ir::mma_accumulator(shape[0], shape[1], wm, warps / wm)) return WarpGrid{wm, warps / wm};
    }
  return std::nullopt;
}

// Whether T.copy `op` (a whole fp32 fragment laid out as a wgmma accumulator into a whole 2-D
// 16-bit panel tile, or whole panels of one: a stage's last 64 columns) stores with stmatrix
// (stmatrix_accumulator in device/cuda/wgmma.h), and the accumulator's warpgroup grid. Whole
// panels of a tile are laid out as a tile of their own would be, from their first element.
std::optional<WarpgroupGrid> stmatrix_copy_grid(const ir::Copy& op, int threads) {
  const ir::Buffer& src = op.src.buffer;
  const ir::Buffer& dst = op.dst.buffer;
  if (!whole_fragment(op.src) || !(whole_shared_tile(op.dst) || whole_panel_columns(op.dst)) ||
      ir::squeezed_extents(op.dst).size() != 2 || !src->fragment || !ir::panel_width(*dst) ||
      src->dtype != DType::Float32 || dst->dtype.bytes() != 2 || !dst->dtype.is_float())
    return std::nullopt;
  auto shape = const_shape(src);
  if (shape.size() != 2) return std::nullopt;
  const int64_t groups = threads / 128;
  for (int64_t gm = 1; gm <= groups; ++gm) {
    const int64_t gn = groups / gm;
    if (groups % gm || shape[0] % (64 * gm) || shape[1] % (16 * gn)) continue;
    if (*src->fragment == ir::wgmma_accumulator(shape[0], shape[1], gm, gn)) return WarpgroupGrid{gm, gn};
  }
  return std::nullopt;
}

// Whether `copy` is a TMA store under ctx's pass configs ("tilec.tma_store", in the
// contiguous variant, whose strides are known).
bool is_tma_store(const ir::Copy& copy, const PassContext& ctx, const ir::VarMap& lets) {
  return copy.allow_tma && copy.src.buffer->scope == ir::MemoryScope::Shared &&
         copy.dst.buffer->scope == ir::MemoryScope::Global && ctx.contiguous_args &&
         hopper_feature(ctx, "tilec.tma_store") && tma_tile(copy.src, copy.dst, lets).has_value();
}

// Whether T.atomic_add of shared tile op.src into op.dst is a TMA reduce-add
// (cp.reduce.async.bulk.tensor .add): float32 on both sides, a tile TMA can move, in the
// contiguous variant, where "tilec.tma" allows it.
bool is_tma_reduce_add(const ir::AtomicAdd& op, const PassContext& ctx, const ir::VarMap& lets) {
  return op.src.buffer->scope == ir::MemoryScope::Shared && op.dst.buffer->scope == ir::MemoryScope::Global &&
         op.src.buffer->dtype == DType::Float32 && op.dst.buffer->dtype == DType::Float32 && ctx.contiguous_args &&
         hopper_feature(ctx, "tilec.tma") && tma_tile(op.src, op.dst, lets).has_value();
}

ir::GemmInstruction wgmma_instruction(const ir::Gemm& op, const WarpgroupGrid& grid) {
  ir::GemmInstruction in{.kind = ir::GemmInstructionKind::Wgmma, .grid_m = grid.groups_m, .grid_n = grid.groups_n};
  in.inst_m = 64;
  in.inst_n = wgmma_width(gemm_shape(op)->n / grid.groups_n);
  in.inst_k = tensor_core_k(op.a.buffer->dtype);
  in.a_in_registers = whole_fragment(op.a);
  if (!in.a_in_registers) in.a_panel_bytes = panel_bytes_of(*op.a.buffer);
  in.b_panel_bytes = panel_bytes_of(*op.b.buffer);
  return in;
}

ir::GemmInstruction mma_instruction(const ir::Gemm& op, const WarpGrid& grid) {
  ir::GemmInstruction in{.kind = ir::GemmInstructionKind::MmaSync, .grid_m = grid.warps_m, .grid_n = grid.warps_n};
  in.inst_m = 16;
  in.inst_n = 8;
  in.inst_k = tensor_core_k(op.a.buffer->dtype);
  in.a_in_registers = whole_fragment(op.a);
  in.b_in_registers = whole_fragment(op.b);
  in.a_swizzled = !in.a_in_registers;
  in.b_swizzled = !in.b_in_registers;
  return in;
}

// The shared buffers a kernel keeps in panels: the pipeline stages TMA fills, the shared
// operands of its wgmma gemms and the sources of its TMA stores. An mma.sync gemm reading one
// of them runs off the tensor cores (its ldmatrix addressing knows the swizzled layout only).
// A buffer's own layout is no reason: make_swizzled_layout's panels yield to the mma swizzle,
// and a user's layout mma_warp_grid has weighed already.
using PanelTiles = std::unordered_set<const ir::BufferNode*>;

// CUDA's choices for one kernel (passes/gpu/select_instructions.h).
class CudaKernelInstructions : public KernelInstructionChoice {
 public:
  CudaKernelInstructions(const Stmt& body, int threads, const PassContext& ctx)
      : threads_(threads), ctx_(ctx), lets_(ir::let_values(body)) {
    struct Panels : ir::IRVisitor {
      CudaKernelInstructions* self;
      void visit_Gemm(const ir::Gemm* op) override {
        const ir::GemmInstruction in = op->instruction.selected() ? op->instruction : self->tensor_core_choice(*op);
        if (in.a_panel_bytes) self->panels_.insert(op->a.buffer.get());
        if (in.b_panel_bytes) self->panels_.insert(op->b.buffer.get());
      }
      void visit_Copy(const ir::Copy* op) override {
        const ir::CopyInstruction in = op->instruction.selected() ? op->instruction : self->global_copy_choice(*op);
        if (in.kind == ir::CopyInstructionKind::TmaStore) self->panels_.insert(op->src.buffer.get());
        if (in.kind == ir::CopyInstructionKind::TmaLoad) self->panels_.insert(op->dst.buffer.get());
      }
      void visit_AtomicAdd(const ir::AtomicAdd* op) override {
        if (op->src.buffer && is_tma_reduce_add(*op, self->ctx_, self->lets_)) self->panels_.insert(op->src.buffer.get());
      }
    } panels;
    panels.self = this;
    panels.visit(body);
  }

  // wgmma where the gemm can run on it; else mma.sync, unless an operand is a panel tile; else
  // element loops.
  ir::GemmInstruction gemm(const ir::Gemm& op) const override {
    std::string why_not;
    ir::GemmInstruction in = tensor_core_choice(op, &why_not);
    if (in.selected()) return in;
    auto grid = mma_warp_grid(op, threads_, ctx_);
    const bool on_mma = grid && !panels_.count(op.a.buffer.get()) && !panels_.count(op.b.buffer.get());
    if (!grid && log_enabled(LogLevel::Debug) && (ir::has_user_layout(*op.a.buffer) || ir::has_user_layout(*op.b.buffer)))
      if (std::string why = mma_swizzle_problem(op); !why.empty())
        log(LogLevel::Debug, op.loc.str() + ": T.gemm runs on CUDA cores, not mma.sync: " + why);
    if (log_enabled(LogLevel::Debug) && hopper_feature(ctx_, "tilec.wgmma"))
      log(LogLevel::Debug, op.loc.str() + ": T.gemm runs on " + (on_mma ? "mma.sync" : "CUDA cores") +
                               ", not wgmma: " + why_not);
    if (on_mma) return mma_instruction(op, *grid);
    warn_on_cuda_cores(op, grid.has_value(), why_not);
    return {.kind = ir::GemmInstructionKind::Fma};
  }

  ir::CopyInstruction copy(const ir::Copy& op) const override { return global_copy_choice(op); }

  ir::CopyInstruction atomic_add(const ir::AtomicAdd& op) const override {
    if (is_tma_reduce_add(op, ctx_, lets_))
      return {.kind = ir::CopyInstructionKind::TmaReduceAdd, .panel_bytes = panel_bytes_of(*op.src.buffer)};
    return {.kind = ir::CopyInstructionKind::Loops};
  }

 private:
  // A gemm of 16- or 8-bit inputs into a float32 or int32 accumulator was written for tensor
  // cores: on scalar FMA it runs many times slower, which its author should hear of (once).
  void warn_on_cuda_cores(const ir::Gemm& op, bool has_mma_grid, const std::string& why_not_wgmma) const {
    const DType c = op.c.buffer->dtype;
    if (op.a.buffer->dtype.bytes() > 2 || (c != DType::Float32 && c != DType::Int32)) return;
    if (auto shape = gemm_shape(op); shape && shape->empty()) return;
    // mma_warp_grid refuses an operand whose user layout gemm_ss can't address before it looks
    // for a grid: that is the reason then.
    const std::string layout_why = has_mma_grid ? "" : mma_swizzle_problem(op);
    std::string why = has_mma_grid          ? "an operand is kept in the panels wgmma and TMA read, which mma.sync can't"
                      : !layout_why.empty() ? "not mma.sync: " + layout_why
                                            : "no grid of the block's " + std::to_string(threads_ / 32) +
                                                  " warps splits the tile into mma.sync's 16 x 8 pieces";
    if (hopper_feature(ctx_, "tilec.wgmma") && !why_not_wgmma.empty()) why += "; not wgmma: " + why_not_wgmma;
    warn_once(op.loc.str() + ": T.gemm on CUDA cores",
              op.loc.str() + ": T.gemm runs on CUDA cores (scalar FMA), not tensor cores: " + why);
  }

  // wgmma where the gemm can run on it, else unselected (`why_not` then says why).
  ir::GemmInstruction tensor_core_choice(const ir::Gemm& op, std::string* why_not = nullptr) const {
    if (auto grid = wgmma_grid(op, threads_, ctx_, why_not)) return wgmma_instruction(op, *grid);
    return {};
  }

  // T.tma_copy's load (one with a barrier); a TMA store; else loops.
  ir::CopyInstruction global_copy_choice(const ir::Copy& op) const {
    if (is_fragment(op.src.buffer) || is_fragment(op.dst.buffer)) return {};
    if (op.barrier) return tma_load_choice(op);
    if (is_tma_store(op, ctx_, lets_))
      return {.kind = ir::CopyInstructionKind::TmaStore, .panel_bytes = panel_bytes_of(*op.src.buffer)};
    return {.kind = ir::CopyInstructionKind::Loops};
  }

  // A load of T.tma_copy's must be a TMA load: its barrier's phase waits for the tile's bytes.
  ir::CopyInstruction tma_load_choice(const ir::Copy& op) const {
    if (!ctx_.target.has(TargetFeature::Tma))
      error_at(op.loc, "T.tma_copy needs the Tensor Memory Accelerator of sm_90a; target " + ctx_.target.name +
                           " has none (T.copy moves the tile on any target)");
    if (!ctx_.contiguous_args)
      error_at(op.loc, "T.tma_copy: TMA reads tensors whose strides are known; this kernel was compiled for "
                       "tensors of any strides");
    if (!tma_tile(op.dst, op.src, lets_))
      error_at(op.loc, "T.tma_copy: TMA can't move this tile: it moves a whole 2-D shared tile whose rows are "
                       "whole 16-byte chunks, from a tensor of the same dtype whose strides are multiples of 16 "
                       "bytes, starting at a column that is provably a multiple of 16 bytes, with constant extents "
                       "and no T.annotate_layout on either side");
    return {.kind = ir::CopyInstructionKind::TmaLoad, .panel_bytes = panel_bytes_of(*op.dst.buffer)};
  }

  int threads_;
  const PassContext& ctx_;
  const ir::VarMap lets_;
  PanelTiles panels_;
};

}  // namespace

std::unique_ptr<KernelInstructionChoice> cuda_kernel_instructions(const ir::Stmt& body, int threads,
                                                                  const PassContext& ctx) {
  return std::make_unique<CudaKernelInstructions>(body, threads, ctx);
}

ir::CopyInstruction cuda_fragment_copy(const ir::Copy& op, int threads, const PassContext& ctx) {
  if (auto groups = stmatrix_copy_grid(op, threads))
    return {.kind = ir::CopyInstructionKind::Stmatrix, .grid_m = groups->groups_m, .grid_n = groups->groups_n,
            .panel_bytes = ir::panel_width(*op.dst.buffer)};
  if (auto grid = ctx.target.has(TargetFeature::Ldmatrix) ? ldmatrix_copy_grid(op, threads) : std::nullopt)
    return {.kind = ir::CopyInstructionKind::Ldmatrix, .grid_m = grid->warps_m, .grid_n = grid->warps_n};
  return {.kind = ir::CopyInstructionKind::Loops};
}

}  // namespace tilec::passes

#include "passes/hip/mfma.h"

#include <cstdlib>

#include "ir/shared_layout.h"
#include "passes/gpu/select_instructions.h"

namespace tilec::passes {

std::optional<ir::GemmInstruction> mfma_instruction(const ir::Gemm& op, int threads, const PassContext& ctx) {
  if (!ctx.target.has(TargetFeature::Mfma) || threads % ctx.target.warp_size != 0) return std::nullopt;
  if (op.c.buffer->scope != ir::MemoryScope::Fragment || op.c.buffer->dtype != DType::Float32) return std::nullopt;
  const bool a_in_registers = whole_fragment(op.a);
  if ((!a_in_registers && !whole_shared_tile(op.a)) || !whole_shared_tile(op.b)) return std::nullopt;
  // The MFMA gemms read LDS row-major: a user's other layout can't be read.
  for (const ir::Buffer& b : {op.a.buffer, op.b.buffer})
    if (b->scope == ir::MemoryScope::Shared && ir::has_user_layout(*b) &&
        ir::user_layout_differs(*b, *ir::SharedLayout::row_major(b->layout->shape())))
      return std::nullopt;
  const DType t = op.a.buffer->dtype;
  if (op.b.buffer->dtype != t) return std::nullopt;
  int64_t kstep;
  switch (t.code()) {
    case DType::Float16: case DType::BFloat16: kstep = 16; break;
    case DType::Float32: kstep = 4; break;
    default: return std::nullopt;
  }
  // A register A is read in the accumulator's 16-column blocks.
  if (a_in_registers) kstep = 16;
  auto shape = gemm_shape(op);
  if (!shape || shape->empty() || shape->m % 16 || shape->n % 16 || shape->k % kstep) return std::nullopt;
  for (int64_t waves = threads / 64; waves >= 1; waves /= 2) {
    std::optional<ir::GemmInstruction> best;
    for (int64_t wm = 1; wm <= waves; ++wm) {
      if (waves % wm) continue;
      const int64_t wn = waves / wm;
      if (shape->m % (16 * wm) || shape->n % (16 * wn)) continue;
      if ((op.policy == ir::WarpPolicy::FullRow && wn != 1) || (op.policy == ir::WarpPolicy::FullCol && wm != 1))
        continue;
      if (a_in_registers && wn != 1) continue;
      auto score = [&](const ir::GemmInstruction& g) { return std::abs(shape->m / g.grid_m - shape->n / g.grid_n); };
      // On a tie the grid with more waves along M, which a gemm reading this one's C
      // converted (as its register A) has too.
      ir::GemmInstruction g{.kind = ir::GemmInstructionKind::Mfma, .grid_m = wm, .grid_n = wn, .inst_m = 16,
                            .inst_n = 16, .inst_k = kstep, .a_in_registers = a_in_registers};
      if (!best || score(g) <= score(*best)) best = g;
    }
    if (best) return best;
  }
  return std::nullopt;
}

ir::Fragment mfma_register_a_layout(const ir::Gemm& op) {
  auto shape = gemm_shape(op);
  if (!shape || !whole_fragment(op.a)) throw std::logic_error("mfma_register_a_layout: A is no whole fragment");
  ir::Fragment acc = ir::mfma_accumulator(shape->m, shape->k, op.instruction.grid_m, 1);
  return op.transpose_a ? acc.project({1, 0}) : acc;
}

}  // namespace tilec::passes

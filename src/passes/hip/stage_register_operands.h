// A T.gemm operand in registers, on a gemm that doesn't run on MFMA (gfx906, and the gemms
// mfma_wave_grid turns down on gfx90a and gfx940), goes through LDS:
//
//   T.gemm(P, V_s, acc)   ->   T.copy(P, P_shared); T.gemm(P_shared, V_s, acc)
//
// P_shared a new shared buffer of P's shape and dtype, allocated where P is. The generic
// gemm has each thread hold whole rows of its A (whole columns of B), which the loop that
// wrote P (spread as the accumulator it was computed from) seldom gives; through LDS, P
// keeps its own layout and the gemm reads what it needs. insert_barriers orders the copy
// and the gemm's reads, plan_shared_memory places the buffer.
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt stage_register_operands(const ir::Stmt& body, const PassContext& ctx);

}  // namespace tilec::passes

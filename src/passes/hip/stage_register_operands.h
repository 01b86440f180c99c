// A T.gemm operand in registers, on a gemm that select_instructions did not put on MFMA
// (gfx906, and the gemms mfma_instruction turns down on gfx90a and gfx940), goes through LDS:
//
//   T.gemm(P, V_s, acc)   ->   T.copy(P, P_shared); T.gemm(P_shared, V_s, acc)
//
// P_shared a new shared buffer of P's shape and dtype, allocated where P is. The generic
// gemm has each thread hold whole rows of its A (whole columns of B), which the loop that
// wrote P (spread as the accumulator it was computed from) seldom gives; through LDS, P
// keeps its own layout and the gemm reads what it needs. insert_barriers orders the copy
// and the gemm's reads, plan_shared_memory places the buffer. The staged gemm's choice is
// cleared, and select_instructions, run again after this pass, makes it anew: MFMA where its
// operands in LDS allow (gfx90a, gfx940: a B in registers), else element loops.
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt stage_register_operands(const ir::Stmt& body, const PassContext& ctx);

}  // namespace tilec::passes

#include "passes/gpu/instruction_lowering.h"

#include <stdexcept>
#include <vector>

#include "ir/device_calls.h"
#include "passes/gpu/select_instructions.h"

namespace tilec::passes {

std::string gemm_shape_arguments(const ir::Gemm& op) {
  auto shape = gemm_shape(op);
  if (!shape) throw std::logic_error("lower_to_threads: a tensor-core gemm of a symbolic shape");
  return std::to_string(shape->m) + ", " + std::to_string(shape->n) + ", " + std::to_string(shape->k) + ", ";
}

ir::Stmt matrix_core_gemm_call(const ir::Gemm& op, const std::string& routine, InstructionLoweringContext& ctx,
                               bool clears_itself) {
  const ir::GemmInstruction& in = op.instruction;
  auto operand = [&](const ir::BufferRegion& r, bool in_registers) {
    return in_registers ? ctx.registers(r.buffer) : ctx.tile_address(r);
  };
  std::vector<ir::Stmt> out;
  if (op.clear_accum && !clears_itself) out.push_back(ctx.fill_registers(op.c.buffer, ir::make_float(0, DType::Float32)));
  out.push_back(ir::device_call(routine,
                                {operand(op.a, in.a_in_registers), operand(op.b, in.b_in_registers),
                                 ctx.registers(op.c.buffer), ctx.thread_index()},
                                op.loc));
  return ir::make_seq(out);
}

}  // namespace tilec::passes

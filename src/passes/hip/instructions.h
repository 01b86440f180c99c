// HIP's instruction choices, its hooks of select_instructions (passes/gpu/select_instructions.h):
// T.gemm on MFMA where mfma_instruction (passes/hip/mfma.h) says it runs there, else element
// loops (fma); every copy in loops (gfx9 has no asynchronous or matrix copies tilec uses).
#pragma once

#include <memory>

#include "passes/gpu/select_instructions.h"

namespace tilec::passes {

std::unique_ptr<KernelInstructionChoice> hip_kernel_instructions(const ir::Stmt& body, int threads,
                                                                 const PassContext& ctx);
ir::CopyInstruction hip_fragment_copy(const ir::Copy& op, int threads, const PassContext& ctx);

}  // namespace tilec::passes

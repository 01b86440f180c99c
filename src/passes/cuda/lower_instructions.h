// CUDA's instruction lowering, its hooks of lower_to_threads (passes/gpu/instruction_lowering.h):
//
//   gemm   mma.sync: gemm_ss, or gemm_rs / gemm_sr with A / B in registers (device/cuda/gemm.h);
//          wgmma: wgmma_gemm_ss / wgmma_gemm_rs over the warpgroups (device/cuda/wgmma.h)
//   copy   ldmatrix: ldmatrix_accumulator, a shared tile into a fragment laid out as an
//          mma.sync accumulator; stmatrix: stmatrix_accumulator, a wgmma accumulator into a
//          shared panel tile (device/cuda/gemm.h, wgmma.h); TMA: tma_load / tma_store a panel
//          at a time, on the kernel's tensor maps (device/cuda/tma.h)
//   atomic_add  TMA reduce-add: tma_reduce_add a panel at a time, as a TMA store
#pragma once

#include <optional>

#include "passes/gpu/instruction_lowering.h"

namespace tilec::passes {

std::optional<ir::Stmt> cuda_lower_gemm(const ir::Gemm& op, InstructionLoweringContext& ctx);
std::optional<ir::Stmt> cuda_lower_copy(const ir::Copy& op, InstructionLoweringContext& ctx);
std::optional<ir::Stmt> cuda_lower_atomic_add(const ir::AtomicAdd& op, InstructionLoweringContext& ctx);

}  // namespace tilec::passes

// The one place that says which passes run for each target, and in what order, and which
// hooks of its own a target gives the GPU passes it shares (passes/gpu/).
//
// TILEC_DUMP_IR=1 prints the IR after every pass to stderr; TILEC_TIME_PASSES=1
// prints each pass's time (so does log level DEBUG).
#include "passes/pipeline.h"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include "base/env_switch.h"
#include "base/log.h"
#include "ir/printer.h"
#include "passes/cuda/gemm_layouts.h"
#include "passes/cuda/instructions.h"
#include "passes/cuda/lower_instructions.h"
#include "passes/cuda/pingpong_warpgroups.h"
#include "passes/cuda/register_moves.h"
#include "passes/cuda/warp_specialize.h"
#include "passes/gpu/bind_repeated_loads.h"
#include "passes/gpu/infer_layout.h"
#include "passes/gpu/insert_barriers.h"
#include "passes/fold_range_tests.h"
#include "passes/guard_global_accesses.h"
#include "passes/gpu/lower_to_threads.h"
#include "passes/gpu/merge_cp_async_waits.h"
#include "passes/gpu/pipeline_loops.h"
#include "passes/gpu/plan_shared_memory.h"
#include "passes/gpu/select_instructions.h"
#include "passes/hip/gemm_layouts.h"
#include "passes/hip/instructions.h"
#include "passes/hip/lower_instructions.h"
#include "passes/hip/stage_register_operands.h"
#include "passes/lower_tile_ops.h"
#include "passes/wgmma_waits.h"
#include "passes/require_gpu_features.h"
#include "passes/simplify.h"
#include "passes/specialize_contiguous.h"
#include "passes/thread_loops.h"
#include "passes/verify.h"

namespace tilec::passes {
namespace {

struct PassEntry {
  const char* name;
  PassFunction run;
};

std::vector<PassEntry> passes_for(const Target& target) {
  if (target.is_cpu()) {
    return {
        {"verify", verify},
        {"require_gpu_features", require_gpu_features},
        {"guard_global_accesses", guard_global_accesses},
        {"wgmma_waits", wgmma_waits},
        {"lower_tile_ops", lower_tile_ops},
        {"plan_shared_memory", plan_shared_memory},  // as on a GPU: buffers not alive together share bytes
        {"thread_loops", thread_loops},
        {"simplify", simplify},
        {"fold_range_tests", fold_range_tests},
        {"verify", verify},
    };
  }
  if (target.is_cuda()) {
    return {
        {"verify", verify},
        {"require_gpu_features", require_gpu_features},
        {"check_register_moves", check_register_moves},
        {"guard_global_accesses", guard_global_accesses},
        {"select_instructions", select_instructions},
        {"warp_specialize", warp_specialize},
        {"pingpong_warpgroups", pingpong_warpgroups},
        {"pipeline_loops", pipeline_loops},
        {"infer_layout", infer_layout},
        {"wgmma_waits", wgmma_waits},
        {"select_fragment_copies", select_fragment_copies},
        {"plan_shared_memory", plan_shared_memory},
        {"insert_barriers", insert_barriers},
        {"lower_tile_ops", lower_tile_ops_for_threads},
        {"lower_to_threads", lower_to_threads},
        {"merge_cp_async_waits", merge_cp_async_waits},
        {"plan_shared_memory", plan_shared_memory},  // the shared buffers lowering made
        {"simplify", simplify},
        {"fold_range_tests", fold_range_tests},
        {"bind_repeated_loads", bind_repeated_loads},
        {"verify", verify},
    };
  }
  // CUDA's passes without Hopper's warp specialization; the Target (passes/pass.h) gives the
  // 64-lane wave, and its features leave out the mma.sync path. A gemm off MFMA reads a
  // register operand through LDS, and is selected again (MFMA takes it there).
  if (target.is_hip()) {
    return {
        {"verify", verify},
        {"require_gpu_features", require_gpu_features},
        {"guard_global_accesses", guard_global_accesses},
        {"select_instructions", select_instructions},
        {"pipeline_loops", pipeline_loops},
        {"stage_register_operands", stage_register_operands},
        {"select_instructions", select_instructions},  // the gemms it staged (on MFMA, now in LDS)
        {"infer_layout", infer_layout},
        {"wgmma_waits", wgmma_waits},
        {"select_fragment_copies", select_fragment_copies},
        {"plan_shared_memory", plan_shared_memory},
        {"insert_barriers", insert_barriers},
        {"lower_tile_ops", lower_tile_ops_for_threads},
        {"lower_to_threads", lower_to_threads},
        {"plan_shared_memory", plan_shared_memory},  // the shared buffers lowering made
        {"simplify", simplify},
        {"fold_range_tests", fold_range_tests},
        {"bind_repeated_loads", bind_repeated_loads},
        {"verify", verify},
    };
  }
  throw std::invalid_argument("target '" + target.name + "' has no pass list (pipeline.cc has cpu, cuda and hip)");
}

}  // namespace

InstructionHooks instruction_hooks(const Target& target) {
  if (target.is_cuda()) return {cuda_kernel_instructions, cuda_fragment_copy};  // wgmma, mma.sync, TMA, ...
  if (target.is_hip()) return {hip_kernel_instructions, hip_fragment_copy};     // MFMA
  throw std::logic_error("instruction_hooks: target '" + target.name + "' has no instruction selection");
}

InstructionLowering instruction_lowering(const Target& target) {
  // mma.sync, wgmma; ldmatrix, stmatrix, TMA; TMA reduce-add
  if (target.is_cuda()) return {cuda_lower_gemm, cuda_lower_copy, cuda_lower_atomic_add};
  if (target.is_hip()) return {hip_lower_gemm, nullptr};  // MFMA; no copy instructions
  throw std::logic_error("instruction_lowering: target '" + target.name + "' has no instruction lowering");
}

GemmLayoutHook gemm_layout_hook(const Target& target) {
  if (target.is_cuda()) return cuda_gemm_layouts;  // mma.sync, wgmma
  if (target.is_hip()) return hip_gemm_layouts;    // MFMA
  return nullptr;
}

ir::PrimFunc run_pipeline(ir::PrimFunc func, const PassContext& ctx_in) {
  PassContext ctx = ctx_in;
  if (ctx.contiguous_args) func = specialize_contiguous(func);
  ctx.func = &func;
  bool dump = env_switch("TILEC_DUMP_IR");
  bool time = env_switch("TILEC_TIME_PASSES");
  for (const PassEntry& pass : passes_for(ctx.target)) {
    auto start = std::chrono::steady_clock::now();
    ir::Stmt before = func.body;
    try {
      func.body = pass.run(func.body, ctx);
    } catch (const std::logic_error& e) {
      throw std::logic_error(std::string("internal compiler error in pass ") + pass.name + " on '" +
                             func.name + "': " + e.what() + "\nIR:\n" + ir::to_string(func));
    }
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    bool unchanged = func.body.same_as(before);
    std::string line = std::string("pass ") + pass.name + ": " + std::to_string(ms) + " ms" +
                       (unchanged ? " (unchanged)" : "");
    if (time) std::cerr << "[tilec] " << line << "\n";
    else log(LogLevel::Debug, line);
    if (ctx.after_pass) ctx.after_pass(pass.name, func);
    if (dump) std::cerr << "// after " << pass.name << (unchanged ? " (unchanged)" : "") << "\n"
                        << ir::to_string(func) << "\n";
  }
  return func;
}

}  // namespace tilec::passes

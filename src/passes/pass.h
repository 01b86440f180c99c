// What every pass sees: pass signature and context. The passes and their
// order are listed in pipeline.cc and nowhere else.
#pragma once

#include <functional>
#include <map>
#include <stdexcept>
#include <string>

#include "ir/ir.h"
#include "target/target.h"

namespace tilec::passes {

struct PassContext {
  Target target;  // what the kernel is compiled for (target/target.h)
  std::map<std::string, std::string> pass_configs;
  const ir::PrimFunc* func = nullptr;  // the function being lowered
  // Lower the variant for calls whose tensors are all contiguous with 16-byte aligned
  // data (passes/specialize_contiguous.h): strides become known, and lowerings may
  // rely on the alignment.
  bool contiguous_args = false;
  // Called with each pass's name and result, when set (the compiler keeps what
  // infer_layout decided, for Kernel::layouts()).
  std::function<void(const char* pass, const ir::PrimFunc& func)> after_pass;
};

using PassFunction = ir::Stmt (*)(const ir::Stmt&, const PassContext&);

// Whether a block of `threads` is whole warps (target.warp_size), as shuffles and barriers
// need: a multiple of the warp size, or on hip one partial wave of a power of two lanes (a
// shuffle then never reaches a lane past the block, which a partial second wave would).
inline bool whole_warps(int threads, const PassContext& ctx) {
  const int warp = ctx.target.warp_size;
  return threads % warp == 0 || (ctx.target.is_hip() && threads < warp && (threads & (threads - 1)) == 0);
}
// What whole_warps asks, for its error.
inline std::string whole_warps_rule(const PassContext& ctx) {
  if (ctx.target.is_hip())
    return "on hip a block is whole 64-lane waves or one wave's first 1, 2, 4, .. 32 lanes";
  return "on a GPU a block is whole warps, so threads must be a multiple of " + std::to_string(ctx.target.warp_size) +
         " on " + ctx.target.name;
}

// A switch among ctx.pass_configs ("1"/"true"/"True" on, "0"/"false"/"False" off; checked
// when the kernel is compiled), or `fallback` when it isn't given.
inline bool config_on(const PassContext& ctx, const std::string& name, bool fallback) {
  auto it = ctx.pass_configs.find(name);
  if (it == ctx.pass_configs.end()) return fallback;
  return it->second == "1" || it->second == "true" || it->second == "True";
}

// Whether Hopper's machinery may be used: wgmma (config "tilec.wgmma"), TMA loads
// ("tilec.tma"), warp specialization ("tilec.warp_specialize"), register reallocation
// ("tilec.setmaxnreg"), the TMA-store epilogue ("tilec.tma_store"), persistent blocks
// ("tilec.persistent") and consumer warpgroups taking turns ("tilec.pingpong"). Each needs the
// target's instructions it uses and the feature it builds on (so all of them need wgmma:
// sm_90a), and is on by default where it can be.
inline bool hopper_feature(const PassContext& ctx, const std::string& feature) {
  struct Feature {
    const char* name;
    TargetFeatures uses;
    const char* needs;
  };
  using F = TargetFeature;
  static constexpr Feature kFeatures[] = {
      {"tilec.wgmma", {F::Wgmma}, nullptr},
      {"tilec.tma", {F::Tma}, "tilec.wgmma"},
      {"tilec.warp_specialize", {}, "tilec.tma"},
      {"tilec.setmaxnreg", {F::Setmaxnreg}, "tilec.warp_specialize"},
      {"tilec.tma_store", {F::Tma, F::Stmatrix}, "tilec.tma"},  // stmatrix_accumulator, then TMA stores
      {"tilec.persistent", {}, "tilec.warp_specialize"},
      {"tilec.pingpong", {}, "tilec.warp_specialize"},
  };
  for (const Feature& f : kFeatures)
    if (feature == f.name)
      return ctx.target.features.has_all(f.uses) && config_on(ctx, f.name, true) &&
             (!f.needs || hopper_feature(ctx, f.needs));
  throw std::logic_error("hopper_feature: unknown feature '" + feature + "'");
}

}  // namespace tilec::passes

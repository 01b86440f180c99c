// What every pass sees: pass signature and context. The passes and their
// order are listed in pipeline.cc and nowhere else.
#pragma once

#include <map>
#include <stdexcept>
#include <string>

#include "ir/ir.h"

namespace tilec::passes {

struct PassContext {
  std::string target;  // "cpu", "cuda", ...
  std::string arch;    // for "cuda": "sm_90a", "sm_80", ...; "" when not known (emitting source)
  std::map<std::string, std::string> pass_configs;
  const ir::PrimFunc* func = nullptr;  // the function being lowered
  // Lower the variant for calls whose tensors are all contiguous with 16-byte aligned
  // data (passes/specialize_contiguous.h): strides become known, and lowerings may
  // rely on the alignment.
  bool contiguous_args = false;
};

using PassFunction = ir::Stmt (*)(const ir::Stmt&, const PassContext&);

// A switch among ctx.pass_configs ("1"/"true"/"True" on, "0"/"false"/"False" off; checked
// when the kernel is compiled), or `fallback` when it isn't given.
inline bool config_on(const PassContext& ctx, const std::string& name, bool fallback) {
  auto it = ctx.pass_configs.find(name);
  if (it == ctx.pass_configs.end()) return fallback;
  return it->second == "1" || it->second == "true" || it->second == "True";
}

// Whether Hopper's machinery (sm_90a) may be used: wgmma (config "tilec.wgmma"), TMA loads
// ("tilec.tma"), warp specialization ("tilec.warp_specialize"), register reallocation
// ("tilec.setmaxnreg"), the TMA-store epilogue ("tilec.tma_store") and persistent blocks
// ("tilec.persistent"); each is on by default and needs the one it builds on.
inline bool hopper_feature(const PassContext& ctx, const std::string& feature) {
  struct Feature {
    const char* name;
    const char* needs;
  };
  static constexpr Feature kFeatures[] = {
      {"tilec.wgmma", nullptr},
      {"tilec.tma", "tilec.wgmma"},
      {"tilec.warp_specialize", "tilec.tma"},
      {"tilec.setmaxnreg", "tilec.warp_specialize"},
      {"tilec.tma_store", "tilec.tma"},
      {"tilec.persistent", "tilec.warp_specialize"},
  };
  if (ctx.arch != "sm_90a") return false;
  for (const Feature& f : kFeatures)
    if (feature == f.name) return config_on(ctx, f.name, true) && (!f.needs || hopper_feature(ctx, f.needs));
  throw std::logic_error("hopper_feature: unknown feature '" + feature + "'");
}

}  // namespace tilec::passes

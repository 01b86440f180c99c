// What every pass sees: pass signature and context. The passes and their
// order are listed in pipeline.cc and nowhere else.
#pragma once

#include <map>
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

// Whether Hopper's machinery (sm_90a) may be used: wgmma (config "tilec.wgmma"), TMA
// ("tilec.tma"), warp specialization ("tilec.warp_specialize"), register reallocation
// ("tilec.setmaxnreg"); each on by default, and each later one needs the ones before.
inline bool hopper_feature(const PassContext& ctx, const std::string& feature) {
  if (ctx.arch != "sm_90a") return false;
  for (const char* f : {"tilec.wgmma", "tilec.tma", "tilec.warp_specialize", "tilec.setmaxnreg"}) {
    if (!config_on(ctx, f, true)) return false;
    if (feature == f) return true;
  }
  return false;
}

}  // namespace tilec::passes

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

}  // namespace tilec::passes

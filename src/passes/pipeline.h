// Lowers a PrimFunc for one target by running that target's passes in order.
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::PrimFunc run_pipeline(ir::PrimFunc func, const PassContext& ctx);

}  // namespace tilec::passes

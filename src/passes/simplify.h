// Folds constants and algebraic identities in every expression, drops dead
// branches and empty loops, inlines loops of one iteration (ir/simplify.h).
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt simplify(const ir::Stmt& body, const PassContext& ctx);

}  // namespace tilec::passes

// Checks that the IR is well formed between passes: every variable is defined
// where it is used, every buffer access has one index per dim and is typed
// like its buffer, on-chip buffers are used inside their allocation, block
// indices only inside their kernel. A failure is a compiler bug: it throws
// std::logic_error naming the pass that broke the IR.
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt verify(const ir::Stmt& body, const PassContext& ctx);

}  // namespace tilec::passes

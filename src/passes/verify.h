// Checks that the IR is well formed: every variable is defined where it is
// used, every buffer access has one index per dim and is typed like its
// buffer, on-chip buffers are used inside their allocation, block indices only
// inside their kernel.
//
// `verify` runs between passes, where a failure is a compiler bug: it throws
// std::logic_error naming what broke. `verify_source` runs the same checks on
// a function just elaborated from source, where a failure is the user's (a
// T.Kernel's buffer or block index reached the next T.Kernel through a tuple,
// a symbolic dim no tensor's shape gives): a CompileError at the construct,
// with a note where the name is defined; and asynchronous gemms' results used
// before a wait (check_wgmma_flight, wgmma_waits.h). The elaborator calls it,
// so the pipeline's first `verify` never fails on any source.
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt verify(const ir::Stmt& body, const PassContext& ctx);

void verify_source(const ir::PrimFunc& func);

}  // namespace tilec::passes

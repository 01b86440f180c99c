// 0 <= x < n as one unsigned compare, where n is a tensor's extent read at the call. With n a
// constant nvcc folds `x >= 0 && x < n` into `(unsigned) x < n` itself; with n a symbolic dim it
// can't, not knowing n >= 0, and every guarded load and store of a kernel whose lengths are read
// at the call keeps two tests and a branch between them. A tensor's extent is never negative,
// so `(unsigned) x < (unsigned) n` is the same test.
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

// Each conjunction's pair `x >= 0`, `x < n` (either order, any positions), with n one of
// ctx.func's tensor parameters' dims that is a symbol by itself (or its widening cast), becomes
// `T.cast(x, "uintB") < T.cast(n, "uintB")` at the first's place; x of int32 or int64.
ir::Stmt fold_range_tests(const ir::Stmt& body, const PassContext& ctx);

}  // namespace tilec::passes

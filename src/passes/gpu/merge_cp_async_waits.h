// Tiles copied into shared memory by cp.async outside a pipelined loop (each T.copy's
// cp_async_N, cp_async_commit, cp_async_wait_all) are waited for as late as their list allows:
// each wait moves down to the first statement that touches shared memory, and waits that meet
// there become one, so the tiles travel together and under the work before their first reader.
//
//   cp_async_16(&Q_s[..], ..) ...; cp_async_commit()      cp_async_16(&Q_s[..], ..) ...; cp_async_commit()
//   cp_async_wait_all()                                   acc_o[..] = 0
//   acc_o[..] = 0                                    ->   cp_async_16(&K_s[..], ..) ...; cp_async_commit()
//   cp_async_16(&K_s[..], ..) ...; cp_async_commit()      m[..] = exp2(s[..] - ..)
//   cp_async_wait_all()                                   cp_async_wait_all()
//   m[..] = exp2(s[..] - ..)                              fence_proxy_async(); sync_threads(); gemm(..)
//   fence_proxy_async(); sync_threads(); gemm(..)
//
// A wait passes loads and stores of registers, locals and global memory (with any math, shuffles
// included, in their values), other cp.async copies, and loops and branches made of those. A
// load or store of a shared buffer, or a device call as a statement (a barrier, a fence, a
// gemm), stops it; so does its list's end.
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt merge_cp_async_waits(const ir::Stmt& body, const PassContext& ctx);

}  // namespace tilec::passes

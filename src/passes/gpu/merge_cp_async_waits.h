// Tiles copied into shared memory by cp.async and waited for at once (each T.copy outside a
// pipelined loop: its cp_async_N, cp_async_commit, cp_async_wait_all) wait together when
// nothing between them touches shared memory: each wait but the last goes, so the tiles travel
// at once and the threads wait for the slowest instead of for each in turn.
//
//   cp_async_16(&Q_s[..], ..) ...; cp_async_commit()      cp_async_16(&Q_s[..], ..) ...; cp_async_commit()
//   cp_async_wait_all()                                   acc_o[..] = 0
//   acc_o[..] = 0                                    ->   cp_async_16(&K_s[..], ..) ...; cp_async_commit()
//   cp_async_16(&K_s[..], ..) ...; cp_async_commit()      cp_async_wait_all()
//   cp_async_wait_all()
//
// "Between" is the statements of one list (and their nested loops and branches): loads and
// stores of registers, locals and global memory, and other cp.async copies. A load or store of
// a shared buffer, or any other device call (a barrier, a fence, a gemm), keeps the wait before
// it.
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt merge_cp_async_waits(const ir::Stmt& body, const PassContext& ctx);

}  // namespace tilec::passes

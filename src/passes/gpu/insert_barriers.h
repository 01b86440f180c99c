// Block-wide barriers (sync_threads) where the data needs them, and nowhere else.
//
// Works on tile-level code, where each tile op and T.Parallel nest is spread over the
// block's threads: a barrier goes before a statement that reads a shared buffer written
// since the last barrier, or writes one read or written since then, with loop iterations
// and both sides of branches taken into account. A loop whose body would need barriers only
// for accesses made before it gets one barrier before the loop instead (it runs once, and the
// threads are not held in step every iteration). Fragments and locals are each thread's
// own and need none. Global memory is not ordered between a block's threads (as in
// TileLang and Triton: stage data through shared memory to hand it to other threads).
// Buffers filled by async copies are left to pipeline_loops. Buffers that plan_shared_memory
// placed on overlapping bytes count as one.
//
// A TMA store or reduce-add (thread 0 issues it; the tile is read after the threads go on) is
// waited for here too, as late as is safe: thread 0's tma_store_wait_read goes before the last
// barrier ahead of the tile's next write, or before one placed for it when none comes between,
// and at the kernel's end:
//
//   for k in ...:                                   for k in ...:
//     T.copy(A[k], A_s)                                T.copy(A[k], A_s)
//     T.copy(A_s, X_f)                                 if thread_in(0, 1): tma_store_wait_read()
//     T.copy(X_f, X_s)                        ->       sync_threads()
//     T.atomic_add(C[k], X_s)  # tma reduce-add        T.copy(A_s, X_f)
//                                                      T.copy(X_f, X_s)
//                                                      sync_threads()
//                                                      T.atomic_add(C[k], X_s)
//                                                    if thread_in(0, 1): tma_store_wait_read()
//
// In a warp-specialized launch or one with T.ws groups, whose barriers need not include thread
// 0, it waits right after the store.
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt insert_barriers(const ir::Stmt& body, const PassContext& ctx);

}  // namespace tilec::passes

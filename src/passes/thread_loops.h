// The CPU's threads of a block (the CPU runs each block as one thread).
//
// A kernel whose statements read the thread index (T.get_thread_binding) runs each of those
// statements once for every thread of the block: the statement becomes a loop over the
// thread index in [0, threads). Each thread's own values get one copy per thread: the locals
// (T.alloc_local, T.alloc_var, runtime variables) that such statements write, and the lets
// whose values differ from thread to thread. Statements that read no thread's own value run
// once, as on a GPU every thread would run them alike.
//
// A loop or branch the threads take together (bounds and condition the same on every
// thread) is split at its statements when it holds a T.sync_threads or touches shared
// memory, so each statement finds all threads' earlier ones done, as after a barrier; other
// statements run whole, thread after thread. A program without data races gives the results
// it gives on a GPU. T.sync_threads is dropped (the loops are its barrier); one under a
// condition or in a loop that differs from thread to thread is an error, as on a GPU it
// would hang. T.cluster_sync splits the statements the same way and stays, once for the block
// (device/cpu/clusters.h runs a cluster's blocks as fibers); it is checked as on a GPU.
//
// A thread group (T.ws; passes/thread_groups.h) keeps its branch, which the CPU runs as a fiber
// (device/cpu/thread_groups.h); its statements loop over its own threads. A thread_in(lo, hi)
// branch (a barrier's initialization, a TMA load's issue) runs once for those threads, or over
// them where it reads their values. An mbarrier arrival is each thread's: it runs once for
// every thread that reaches it.
//
// Runs after lower_tile_ops (tile ops are loops of element accesses by then).
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt thread_loops(const ir::Stmt& body, const PassContext& ctx);

}  // namespace tilec::passes

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
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt insert_barriers(const ir::Stmt& body, const PassContext& ctx);

}  // namespace tilec::passes

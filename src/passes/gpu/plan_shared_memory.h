// Places every shared buffer of each kernel in the block's shared memory
// (BufferNode::shared_offset); the code generator only prints the offsets.
//
// On tile code (before lower_to_threads), buffers whose lifetimes don't overlap share bytes. A
// buffer lives from the first statement that touches it to the last, in program order; a loop
// that touches it keeps it alive for the whole loop (its next iteration may touch it again).
// Buffers are placed largest first, each at the lowest offset (1024-byte aligned for tiles in
// the mma swizzle or in panels, else 128) clear of every placed buffer it is alive with. A
// view (T.reshape) is at its buffer's place, and its uses keep that buffer alive.
// insert_barriers then treats overlapping buffers as one, which puts a barrier between the
// last use of the old contents and the first write of the new.
//
// The pass runs again on per-thread code (after lower_to_threads): the shared buffers lowering
// made (the scratch of cross-warp reductions) are stacked above all the planned ones, in scope
// order, a scope's bytes free again after it:
//
//   A_shared @ 0 (planned), B_shared @ 4096 (planned)        -> end 8192
//   Allocate m_exchange (512 bytes)   -> @ 8192
//     Allocate s_exchange (512 bytes) -> @ 8704
//   Allocate l_exchange (512 bytes)   -> @ 8192 (m_exchange's scope has ended)
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt plan_shared_memory(const ir::Stmt& body, const PassContext& ctx);

}  // namespace tilec::passes

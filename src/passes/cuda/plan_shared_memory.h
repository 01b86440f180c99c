// Places each kernel's shared buffers in the block's shared memory so that buffers whose
// lifetimes don't overlap share bytes (BufferNode::shared_offset).
//
// A buffer lives from the first statement that touches it to the last, in program order;
// a loop that touches it keeps it alive for the whole loop (its next iteration may touch it
// again). Buffers are placed largest first, each at the lowest offset (1024-byte aligned for
// swizzled tiles, else 128) clear of every placed buffer it is alive with. insert_barriers
// then treats overlapping buffers as one, which puts a barrier between the last use of the
// old contents and the first write of the new. Shared memory made later (the scratch of
// cross-warp reductions) is stacked above by the code generator.
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt plan_shared_memory(const ir::Stmt& body, const PassContext& ctx);

// The bytes shared buffer `b` takes (its elements, rounded up to 16 bytes, to 128 when
// swizzled), or -1 when its shape isn't constant.
int64_t shared_footprint(const ir::BufferNode& b);
// Where it may start: a multiple of 1024 bytes when swizzled (whole swizzle periods), else 128.
int64_t shared_alignment(const ir::BufferNode& b);
int64_t round_up(int64_t x, int64_t to);

}  // namespace tilec::passes

#include "op/atomic_add.h"

#include "op/check.h"

namespace tilec::op {

Regions regions(const ir::AtomicAdd& op) {
  Regions r{{op.dst}, {op.dst}};
  if (op.src.buffer) r.reads.insert(r.reads.begin(), op.src);
  return r;
}

void check(const ir::AtomicAdd& op, const SourceLoc& dst_loc) {
  if (op.src.buffer) check_same_tile(op.dst, dst_loc, op.src, "T.atomic_add", "destination", "value");
  if (op.dst.buffer->dtype.is_bool()) error_at(dst_loc, "T.atomic_add: bool buffers cannot be added to");
}

}  // namespace tilec::op

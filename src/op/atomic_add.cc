#include "op/atomic_add.h"

namespace tilec::op {

Regions regions(const ir::AtomicAdd& op) {
  Regions r{{op.dst}, {op.dst}};
  if (op.src.buffer) r.reads.insert(r.reads.begin(), op.src);
  return r;
}

}  // namespace tilec::op

#include "op/copy.h"

#include "op/check.h"

namespace tilec::op {

Regions regions(const ir::Copy& op) { return {{op.src}, {op.dst}}; }

void check(const ir::Copy& op, const SourceLoc& src_loc) {
  check_same_tile(op.src, src_loc, op.dst, "T.copy", "source", "destination");
}

}  // namespace tilec::op

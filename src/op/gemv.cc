#include "op/gemv.h"

namespace tilec::op {

Regions regions(const ir::Gemv& op) {
  Regions r{{op.a, op.x}, {op.y}};
  if (op.accumulate) r.reads.push_back(op.y);
  return r;
}

}  // namespace tilec::op

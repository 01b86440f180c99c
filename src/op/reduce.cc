#include "op/reduce.h"

namespace tilec::op {

Regions regions(const ir::Reduce& op) {
  Regions r{{op.src}, {op.dst}};
  if (!op.clear) r.reads.push_back(op.dst);
  return r;
}

}  // namespace tilec::op

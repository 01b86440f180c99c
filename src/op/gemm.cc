#include "op/gemm.h"

namespace tilec::op {

Regions regions(const ir::Gemm& op) {
  Regions r{{op.a, op.b}, {op.c}};
  if (!op.clear_accum) r.reads.push_back(op.c);
  return r;
}

}  // namespace tilec::op

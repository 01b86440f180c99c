#include "op/gemm.h"

#include "op/check.h"

namespace tilec::op {

Regions regions(const ir::Gemm& op) {
  Regions r{{op.a, op.b}, {op.c}};
  if (!op.clear_accum) r.reads.push_back(op.c);
  return r;
}

void check(const ir::Gemm& op, const SourceLoc& a_loc, const SourceLoc& b_loc, const SourceLoc& c_loc) {
  require_tile_dims(op.a, a_loc, "T.gemm", "A", 2);
  require_tile_dims(op.b, b_loc, "T.gemm", "B", 2);
  require_tile_dims(op.c, c_loc, "T.gemm", "C", 2);
  auto ea = tile_extents(op.a, 2), eb = tile_extents(op.b, 2), ec = tile_extents(op.c, 2);
  ir::Expr M = op.transpose_a ? ea[1] : ea[0], KA = op.transpose_a ? ea[0] : ea[1];
  ir::Expr KB = op.transpose_b ? eb[1] : eb[0], N = op.transpose_b ? eb[0] : eb[1];
  check_dim(KA, KB, op.loc, "T.gemm: the K dims of A and B differ");
  check_dim(M, ec[0], c_loc, "T.gemm: C's rows differ from A's M dim");
  check_dim(N, ec[1], c_loc, "T.gemm: C's columns differ from B's N dim");
  if (!op.c.buffer->dtype.is_float() && op.c.buffer->dtype != DType::Int32)
    error_at(c_loc, std::string("T.gemm: the accumulator C must be a float or int32 buffer, not ") +
                        op.c.buffer->dtype.name());
}

}  // namespace tilec::op

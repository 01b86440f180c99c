#include "op/gemm.h"

#include "ir/region.h"
#include "op/check.h"
#include "op/lowering.h"

namespace tilec::op {

using ir::Expr;
using ir::Stmt;

Regions regions(const ir::Gemm& op) {
  Regions r{{op.a, op.b}, {op.c}};
  if (!op.clear_accum) r.reads.push_back(op.c);
  return r;
}

LayoutConstraints layout_constraints(const ir::Gemm& op) {
  auto ec = const_extents(ir::squeezed_extents(op.c));
  if (ec.size() != 2) return replicated({op.a.buffer, op.b.buffer, op.c.buffer}, op.loc);
  Site site{ec, {}, op.loc, /*seeded_first=*/true};
  site.accesses.push_back(tile_access(op.c, {0, 1}));
  site.accesses.push_back(tile_access(op.a, op.transpose_a ? std::vector<int>{-1, 0} : std::vector<int>{0, -1}));
  site.accesses.push_back(tile_access(op.b, op.transpose_b ? std::vector<int>{1, -1} : std::vector<int>{-1, 1}));
  return {{site}, {}, {}};
}

void check(const ir::Gemm& op, const SourceLoc& a_loc, const SourceLoc& b_loc, const SourceLoc& c_loc) {
  require_tile_dims(op.a, a_loc, "T.gemm", "A", 2);
  require_tile_dims(op.b, b_loc, "T.gemm", "B", 2);
  require_tile_dims(op.c, c_loc, "T.gemm", "C", 2);
  auto ea = ir::tile_extents(op.a, 2), eb = ir::tile_extents(op.b, 2), ec = ir::tile_extents(op.c, 2);
  ir::Expr M = op.transpose_a ? ea[1] : ea[0], KA = op.transpose_a ? ea[0] : ea[1];
  ir::Expr KB = op.transpose_b ? eb[1] : eb[0], N = op.transpose_b ? eb[0] : eb[1];
  check_dim(KA, KB, op.loc, "T.gemm: the K dims of A and B differ");
  check_dim(M, ec[0], c_loc, "T.gemm: C's rows differ from A's M dim");
  check_dim(N, ec[1], c_loc, "T.gemm: C's columns differ from B's N dim");
  if (!op.c.buffer->dtype.is_float() && op.c.buffer->dtype != DType::Int32)
    error_at(c_loc, std::string("T.gemm: the accumulator C must be a float or int32 buffer, not ") +
                        op.c.buffer->dtype.name());
}

Stmt lower(const ir::Gemm& op, const Stmt&, Lowering& l) {
  auto ea = ir::tile_extents(op.a, 2), ec = ir::tile_extents(op.c, 2);
  Expr M = ec[0], N = ec[1];
  Expr K = op.transpose_a ? ea[0] : ea[1];
  Expr i = ir::make_var("i"), j = ir::make_var("j"), k = ir::make_var("k");
  DType acc = op.c.buffer->dtype;
  Lowering::Access c = l.access_2d(op.c, i, j);
  Lowering::Access a = op.transpose_a ? l.access_2d(op.a, k, i) : l.access_2d(op.a, i, k);
  Lowering::Access b = op.transpose_b ? l.access_2d(op.b, j, k) : l.access_2d(op.b, k, j);
  Expr a_val = l.guarded_load(op.a.buffer, a, acc);
  Expr b_val = l.guarded_load(op.b.buffer, b, acc);
  Expr sum = ir::make_Add(ir::make_load(op.c.buffer, c.indices), ir::make_Mul(a_val, b_val));
  Stmt update = ir::make_store(op.c.buffer, c.indices, sum);
  if (c.in_bounds) update = ir::make_if(c.in_bounds, update);
  Stmt loops;
  if (l.threaded()) {
    // Each (i, j) on one thread, k in order inside.
    Stmt k_loop = ir::make_for(k, ir::make_int(0), K, ir::ForKind::Serial, update);
    loops = l.nest({i, j}, {M, N}, k_loop);
  } else {
    Stmt inner = ir::make_for(j, ir::make_int(0), N, Lowering::innermost_kind(a, b, c), update);
    loops = ir::make_for(i, ir::make_int(0), M, ir::ForKind::Serial,
                         ir::make_for(k, ir::make_int(0), K, ir::ForKind::Serial, inner));
  }
  std::vector<Stmt> stmts;
  if (op.clear_accum) {
    Expr ci = ir::make_var("i"), cj = ir::make_var("j");
    Lowering::Access cc = l.access_2d(op.c, ci, cj);
    Stmt zero = ir::make_store(op.c.buffer, cc.indices, l.zero_of(acc));
    if (cc.in_bounds) zero = ir::make_if(cc.in_bounds, zero);
    stmts.push_back(l.nest({ci, cj}, {M, N}, zero, Lowering::innermost_kind(cc)));
  }
  stmts.push_back(loops);
  return l.located(ir::make_seq(stmts), op.loc);
}

}  // namespace tilec::op

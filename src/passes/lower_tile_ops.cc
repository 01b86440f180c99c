#include "passes/lower_tile_ops.h"

#include "op/atomic_add.h"
#include "op/copy.h"
#include "op/fill.h"
#include "op/gemm.h"
#include "op/gemv.h"
#include "op/lowering.h"
#include "op/reduce.h"

namespace tilec::op {

using ir::Expr;
using ir::Stmt;

Stmt lower(const ir::Copy& op, const Stmt&, Lowering& l) {
  std::vector<Expr> vars = l.loop_vars(op.dst, "i");
  Lowering::Access src = l.access(op.src, vars), dst = l.access(op.dst, vars);
  Expr value = ir::make_cast(op.dst.buffer->dtype, ir::make_load(op.src.buffer, src.indices));
  Stmt store = ir::make_store(op.dst.buffer, dst.indices, value);
  if (src.in_bounds) {
    Stmt zero = ir::make_store(op.dst.buffer, dst.indices, l.zero_of(op.dst.buffer->dtype));
    store = ir::make_if(src.in_bounds, store, zero);
  }
  if (dst.in_bounds) store = ir::make_if(dst.in_bounds, store);
  return l.located(l.nest(vars, ir::squeezed_extents(op.dst), store, Lowering::innermost_kind(src, dst)), op.loc);
}

Stmt lower(const ir::Fill& op, const Stmt&, Lowering& l) {
  std::vector<Expr> vars = l.loop_vars(op.dst, "i");
  Lowering::Access dst = l.access(op.dst, vars);
  Stmt store = ir::make_store(op.dst.buffer, dst.indices, op.value);
  if (dst.in_bounds) store = ir::make_if(dst.in_bounds, store);
  return l.located(l.nest(vars, ir::squeezed_extents(op.dst), store, Lowering::innermost_kind(dst)), op.loc);
}

// C[i, j] (+)= sum_k A[i, k] * B[k, j], ordered i, k, j so the innermost
// loop walks rows of B and C contiguously.
Stmt lower(const ir::Gemm& op, const Stmt&, Lowering& l) {
  auto ea = l.tile_extents(op.a, 2), ec = l.tile_extents(op.c, 2);
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

// y[n] = (accumulate ? y[n] : 0) + sum_k A[n, k] * x[k]
Stmt lower(const ir::Gemv& op, const Stmt&, Lowering& l) {
  auto ea = l.tile_extents(op.a, 2);
  Expr n = ir::make_var("n"), k = ir::make_var("k");
  DType acc = op.y.buffer->dtype;
  Lowering::Access y = l.access_tile(op.y, {n}, 1);
  Lowering::Access a = l.access_2d(op.a, n, k);
  Lowering::Access x = l.access_tile(op.x, {k}, 1);
  Expr product = ir::make_Mul(l.guarded_load(op.a.buffer, a, acc), l.guarded_load(op.x.buffer, x, acc));
  Stmt update = ir::make_store(op.y.buffer, y.indices,
                               ir::make_Add(ir::make_load(op.y.buffer, y.indices), product));
  Stmt body = ir::make_for(k, ir::make_int(0), ea[1], ir::ForKind::Serial, update);
  if (!op.accumulate)
    body = ir::make_seq({ir::make_store(op.y.buffer, y.indices, l.zero_of(acc)), body});
  if (y.in_bounds) body = ir::make_if(y.in_bounds, body);
  return l.located(l.nest({n}, {ea[0]}, body, ir::ForKind::Serial), op.loc);
}

// For each element of dst: r = combine over the reduced dim of src; then
// dst = r (clear) or dst = combine(dst, r).
Stmt lower(const ir::Reduce& op, const Stmt&, Lowering& l) {
  const ir::BufferRegion& src = op.src;
  DType t = op.dst.buffer->dtype;
  std::vector<Expr> src_vars(src.region.size());
  std::vector<int> kept;  // src dims (other than the reduced one) that are not extent 1
  for (size_t d = 0; d < src.region.size(); ++d) {
    if (static_cast<int>(d) == op.dim) continue;
    if (!ir::is_one(src.region[d].extent)) kept.push_back(static_cast<int>(d));
  }
  std::vector<Expr> out_vars;
  for (int d : kept) {
    src_vars[d] = ir::make_var("i" + std::to_string(out_vars.size()));
    out_vars.push_back(src_vars[d]);
  }
  Expr r = ir::make_var("r");
  src_vars[op.dim] = r;
  ir::BoundAnalyzer saved = l.bounds_;
  for (size_t d = 0; d < src.region.size(); ++d)
    if (src_vars[d]) l.bind_range(src_vars[d], ir::make_int(0), src.region[d].extent);
  std::vector<Expr> src_idx;
  Expr src_ok;
  for (size_t d = 0; d < src.region.size(); ++d) {
    Expr idx = src_vars[d] ? ir::make_Add(src.region[d].min, src_vars[d]) : src.region[d].min;
    src_idx.push_back(idx);
    src_ok = l.conjoin(src_ok, l.in_range(idx, src.buffer->shape[d]));
  }
  Lowering::Access dst = l.access(op.dst, out_vars);
  l.bounds_ = saved;

  ir::Buffer acc = ir::make_buffer("acc", t, {ir::make_int(1)}, {}, ir::MemoryScope::Local, op.loc);
  std::vector<Expr> zero_idx = {ir::make_int(0)};
  Expr acc_val = ir::make_load(acc, zero_idx);
  Expr x = ir::make_cast(t, ir::make_load(src.buffer, src_idx));
  if (op.reduce_kind == ir::ReduceKind::AbsSum || op.reduce_kind == ir::ReduceKind::AbsMax)
    x = ir::make_call(t, "abs", {x});
  Stmt step = ir::make_store(acc, zero_idx, l.combine(op.reduce_kind, acc_val, x));
  if (src_ok) step = ir::make_if(src_ok, step);
  Expr result = op.clear ? acc_val : l.combine(op.reduce_kind, ir::make_load(op.dst.buffer, dst.indices), acc_val);
  Stmt body = ir::make_seq({
      ir::make_store(acc, zero_idx, l.identity_of(op.reduce_kind, t)),
      ir::make_for(r, ir::make_int(0), src.region[op.dim].extent, ir::ForKind::Serial, step),
      ir::make_store(op.dst.buffer, dst.indices, result),
  });
  body = ir::make_allocate(acc, body);
  if (dst.in_bounds) body = ir::make_if(dst.in_bounds, body);
  std::vector<Expr> extents;
  for (int d : kept) extents.push_back(src.region[d].extent);
  return l.located(l.nest(out_vars, extents, body, ir::ForKind::Serial), op.loc);
}

Stmt lower(const ir::AtomicAdd& op, const Stmt& self, Lowering& l) {
  if (!op.src.buffer) {
    Lowering::Access dst = l.access(op.dst, {});
    if (!dst.in_bounds) return self;
    return l.located(ir::make_if(dst.in_bounds, self), op.loc);
  }
  std::vector<Expr> vars = l.loop_vars(op.dst, "i");
  Lowering::Access src = l.access(op.src, vars), dst = l.access(op.dst, vars);
  auto scalar = std::make_shared<ir::AtomicAdd>();
  scalar->dst.buffer = op.dst.buffer;
  for (const auto& idx : dst.indices) scalar->dst.region.push_back({idx, ir::make_int(1)});
  scalar->value = l.guarded_load(op.src.buffer, src, op.dst.buffer->dtype);
  scalar->loc = op.loc;
  Stmt body(scalar);
  if (dst.in_bounds) body = ir::make_if(dst.in_bounds, body);
  return l.located(l.nest(vars, ir::squeezed_extents(op.dst), body, ir::ForKind::Serial), op.loc);
}

Stmt Lowering::nest(const std::vector<Expr>& vars, const std::vector<Expr>& extents, Stmt body,
                    ir::ForKind innermost) const {
  for (size_t i = vars.size(); i-- > 0;) {
    ir::ForKind kind = i + 1 == vars.size() ? innermost : ir::ForKind::Serial;
    if (threaded_) kind = ir::ForKind::Parallel;
    body = ir::make_for(vars[i], ir::make_int(0, vars[i]->dtype), ir::make_cast(vars[i]->dtype, extents[i]),
                        kind, body);
  }
  return body;
}

}  // namespace tilec::op

namespace tilec::passes {
namespace {

using ir::Stmt;

class TileOpLowering : public op::Lowering {
 public:
  // With `kept` (threaded): the loops over each op's elements are T.Parallel loops (for a
  // target that spreads them over threads) rather than serial and vectorized ones, and the
  // ops `kept` names are left as they are.
  explicit TileOpLowering(KeepTileOp kept = nullptr) : Lowering(kept != nullptr), kept_(std::move(kept)) {}

  // Each tile op the target doesn't keep, by its unit's lowering.
  Stmt mutate(const Stmt& s) override {
    if (s && op::is_tile_op(s.kind()) && !(kept_ && kept_(*s, threads_))) return op::lower_of(s, *this);
    return Lowering::mutate(s);
  }
  using Lowering::mutate;

 protected:
  Stmt mutate_KernelLaunch(const ir::KernelLaunch* op, const Stmt& self) override {
    threads_ = op->threads;
    return Lowering::mutate_KernelLaunch(op, self);
  }

 private:
  const KeepTileOp kept_;
  int threads_ = 0;
};

}  // namespace

ir::Stmt lower_tile_ops(const ir::Stmt& body, const PassContext&) { return TileOpLowering().mutate(body); }

ir::Stmt lower_tile_ops_threaded(const ir::Stmt& body, const KeepTileOp& kept) {
  return TileOpLowering(kept).mutate(body);
}

}  // namespace tilec::passes

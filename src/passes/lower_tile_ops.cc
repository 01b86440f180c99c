#include "passes/lower_tile_ops.h"

#include <limits>

#include <unordered_map>

#include "ir/bound.h"
#include "ir/equal.h"
#include "ir/mutator.h"
#include "ir/region.h"
#include "ir/simplify.h"

namespace tilec::passes {
namespace {

using ir::Expr;
using ir::is_zero;
using ir::Stmt;

// Index expressions into one operand of a tile op, for a point of the tile
// given by one loop variable per squeezed dim.
struct Access {
  std::vector<Expr> indices;
  Expr in_bounds;  // null when provably in bounds
};

class TileOpLowering : public ir::IRMutator {
 protected:
  Stmt mutate_KernelLaunch(const ir::KernelLaunch* op, const Stmt& self) override {
    ir::BoundAnalyzer saved = bounds_;
    for (size_t i = 0; i < op->grid.size(); ++i) bind_range(op->block_vars[i], ir::make_int(0), op->grid[i]);
    Stmt result = IRMutator::mutate_KernelLaunch(op, self);
    bounds_ = saved;
    return result;
  }

  Stmt mutate_For(const ir::For* op, const Stmt& self) override {
    ir::BoundAnalyzer saved = bounds_;
    bind_range(op->var, op->min, op->extent);
    Stmt result = IRMutator::mutate_For(op, self);
    bounds_ = saved;
    return result;
  }

  Stmt mutate_LetStmt(const ir::LetStmt* op, const Stmt& self) override {
    ir::BoundAnalyzer saved = bounds_;
    if (auto range = bounds_.bound(op->value)) bounds_.bind(op->var, *range);
    Stmt result = IRMutator::mutate_LetStmt(op, self);
    bounds_ = saved;
    return result;
  }

  Stmt mutate_Copy(const ir::Copy* op, const Stmt&) override {
    std::vector<Expr> vars = loop_vars(op->dst, "i");
    Access src = access(op->src, vars), dst = access(op->dst, vars);
    Expr value = ir::make_cast(op->dst.buffer->dtype, ir::make_load(op->src.buffer, src.indices));
    Stmt store = ir::make_store(op->dst.buffer, dst.indices, value);
    if (src.in_bounds) {
      Stmt zero = ir::make_store(op->dst.buffer, dst.indices, zero_of(op->dst.buffer->dtype));
      store = ir::make_if(src.in_bounds, store, zero);
    }
    if (dst.in_bounds) store = ir::make_if(dst.in_bounds, store);
    return located(nest(vars, ir::squeezed_extents(op->dst), store, innermost_kind(src, dst)), op->loc);
  }

  Stmt mutate_Fill(const ir::Fill* op, const Stmt&) override {
    std::vector<Expr> vars = loop_vars(op->dst, "i");
    Access dst = access(op->dst, vars);
    Stmt store = ir::make_store(op->dst.buffer, dst.indices, op->value);
    if (dst.in_bounds) store = ir::make_if(dst.in_bounds, store);
    return located(nest(vars, ir::squeezed_extents(op->dst), store, innermost_kind(dst)), op->loc);
  }

  // C[i, j] (+)= sum_k A[i, k] * B[k, j], ordered i, k, j so the innermost
  // loop walks rows of B and C contiguously.
  Stmt mutate_Gemm(const ir::Gemm* op, const Stmt&) override {
    auto ea = tile_extents(op->a, 2), eb = tile_extents(op->b, 2), ec = tile_extents(op->c, 2);
    Expr M = ec[0], N = ec[1];
    Expr K = op->transpose_a ? ea[0] : ea[1];
    Expr i = ir::make_var("i"), j = ir::make_var("j"), k = ir::make_var("k");
    DType acc = op->c.buffer->dtype;
    Access c = access_2d(op->c, i, j);
    Access a = op->transpose_a ? access_2d(op->a, k, i) : access_2d(op->a, i, k);
    Access b = op->transpose_b ? access_2d(op->b, j, k) : access_2d(op->b, k, j);
    Expr a_val = guarded_load(op->a.buffer, a, acc);
    Expr b_val = guarded_load(op->b.buffer, b, acc);
    Expr sum = ir::make_Add(ir::make_load(op->c.buffer, c.indices), ir::make_Mul(a_val, b_val));
    Stmt update = ir::make_store(op->c.buffer, c.indices, sum);
    if (c.in_bounds) update = ir::make_if(c.in_bounds, update);
    Stmt inner = ir::make_for(j, ir::make_int(0), N, innermost_kind(a, b, c), update);
    Stmt loops = ir::make_for(i, ir::make_int(0), M, ir::ForKind::Serial,
                              ir::make_for(k, ir::make_int(0), K, ir::ForKind::Serial, inner));
    std::vector<Stmt> stmts;
    if (op->clear_accum) {
      Expr ci = ir::make_var("i"), cj = ir::make_var("j");
      Access cc = access_2d(op->c, ci, cj);
      Stmt zero = ir::make_store(op->c.buffer, cc.indices, zero_of(acc));
      if (cc.in_bounds) zero = ir::make_if(cc.in_bounds, zero);
      stmts.push_back(ir::make_for(ci, ir::make_int(0), M, ir::ForKind::Serial,
                                   ir::make_for(cj, ir::make_int(0), N, innermost_kind(cc), zero)));
    }
    stmts.push_back(loops);
    return located(ir::make_seq(stmts), op->loc);
  }

  // y[n] = (accumulate ? y[n] : 0) + sum_k A[n, k] * x[k]
  Stmt mutate_Gemv(const ir::Gemv* op, const Stmt&) override {
    auto ea = tile_extents(op->a, 2);
    Expr n = ir::make_var("n"), k = ir::make_var("k");
    DType acc = op->y.buffer->dtype;
    Access y = access_tile(op->y, {n}, 1);
    Access a = access_2d(op->a, n, k);
    Access x = access_tile(op->x, {k}, 1);
    Expr product = ir::make_Mul(guarded_load(op->a.buffer, a, acc), guarded_load(op->x.buffer, x, acc));
    Stmt update = ir::make_store(op->y.buffer, y.indices,
                                 ir::make_Add(ir::make_load(op->y.buffer, y.indices), product));
    Stmt body = ir::make_for(k, ir::make_int(0), ea[1], ir::ForKind::Serial, update);
    if (!op->accumulate)
      body = ir::make_seq({ir::make_store(op->y.buffer, y.indices, zero_of(acc)), body});
    if (y.in_bounds) body = ir::make_if(y.in_bounds, body);
    return located(ir::make_for(n, ir::make_int(0), ea[0], ir::ForKind::Serial, body), op->loc);
  }

  // For each element of dst: r = combine over the reduced dim of src; then
  // dst = r (clear) or dst = combine(dst, r).
  Stmt mutate_Reduce(const ir::Reduce* op, const Stmt&) override {
    const ir::BufferRegion& src = op->src;
    DType t = op->dst.buffer->dtype;
    std::vector<Expr> src_vars(src.region.size());
    std::vector<int> kept;  // src dims (other than the reduced one) that are not extent 1
    for (size_t d = 0; d < src.region.size(); ++d) {
      if (static_cast<int>(d) == op->dim) continue;
      if (!ir::is_one(src.region[d].extent)) kept.push_back(static_cast<int>(d));
    }
    std::vector<Expr> out_vars;
    for (int d : kept) {
      src_vars[d] = ir::make_var("i" + std::to_string(out_vars.size()));
      out_vars.push_back(src_vars[d]);
    }
    Expr r = ir::make_var("r");
    src_vars[op->dim] = r;
    ir::BoundAnalyzer saved = bounds_;
    for (size_t d = 0; d < src.region.size(); ++d)
      if (src_vars[d]) bind_range(src_vars[d], ir::make_int(0), src.region[d].extent);
    std::vector<Expr> src_idx;
    Expr src_ok;
    for (size_t d = 0; d < src.region.size(); ++d) {
      Expr idx = src_vars[d] ? ir::make_Add(src.region[d].min, src_vars[d]) : src.region[d].min;
      src_idx.push_back(idx);
      src_ok = conjoin(src_ok, in_range(idx, src.buffer->shape[d]));
    }
    Access dst = access(op->dst, out_vars);
    bounds_ = saved;

    ir::Buffer acc = ir::make_buffer("acc", t, {ir::make_int(1)}, {}, ir::MemoryScope::Local, op->loc);
    std::vector<Expr> zero_idx = {ir::make_int(0)};
    Expr acc_val = ir::make_load(acc, zero_idx);
    Expr x = ir::make_cast(t, ir::make_load(src.buffer, src_idx));
    if (op->reduce_kind == ir::ReduceKind::AbsSum || op->reduce_kind == ir::ReduceKind::AbsMax)
      x = ir::make_call(t, "abs", {x});
    Stmt step = ir::make_store(acc, zero_idx, combine(op->reduce_kind, acc_val, x));
    if (src_ok) step = ir::make_if(src_ok, step);
    Expr result = op->clear ? acc_val
                            : combine(op->reduce_kind, ir::make_load(op->dst.buffer, dst.indices), acc_val);
    Stmt body = ir::make_seq({
        ir::make_store(acc, zero_idx, identity_of(op->reduce_kind, t)),
        ir::make_for(r, ir::make_int(0), src.region[op->dim].extent, ir::ForKind::Serial, step),
        ir::make_store(op->dst.buffer, dst.indices, result),
    });
    body = ir::make_allocate(acc, body);
    if (dst.in_bounds) body = ir::make_if(dst.in_bounds, body);
    std::vector<Expr> extents;
    for (int d : kept) extents.push_back(src.region[d].extent);
    return located(nest(out_vars, extents, body, ir::ForKind::Serial), op->loc);
  }

  Stmt mutate_AtomicAdd(const ir::AtomicAdd* op, const Stmt& self) override {
    if (!op->src.buffer) {
      Access dst = access(op->dst, {});
      if (!dst.in_bounds) return self;
      return located(ir::make_if(dst.in_bounds, self), op->loc);
    }
    std::vector<Expr> vars = loop_vars(op->dst, "i");
    Access src = access(op->src, vars), dst = access(op->dst, vars);
    auto scalar = std::make_shared<ir::AtomicAdd>();
    scalar->dst.buffer = op->dst.buffer;
    for (const auto& idx : dst.indices) scalar->dst.region.push_back({idx, ir::make_int(1)});
    scalar->value = guarded_load(op->src.buffer, src, op->dst.buffer->dtype);
    scalar->loc = op->loc;
    Stmt body(scalar);
    if (dst.in_bounds) body = ir::make_if(dst.in_bounds, body);
    return located(nest(vars, ir::squeezed_extents(op->dst), body, ir::ForKind::Serial), op->loc);
  }

 private:
  void bind_range(const Expr& var, const Expr& min, const Expr& extent) {
    auto lo = bounds_.bound(min);
    auto n = bounds_.bound(extent);
    if (lo && n && n->max >= 1) {
      bounds_.bind(var, {lo->min, lo->max + n->max - 1});
    } else if (lo) {
      bounds_.bind(var, {lo->min, std::numeric_limits<int32_t>::max()});
    }
    if (is_zero(min)) extent_of_[var.get()] = extent;
  }

  // `var < extent` for a loop or block index over [0, extent): true even when
  // the extent is symbolic (i_b < b for a grid of b blocks).
  bool below_own_extent(const Expr& idx, const Expr& limit) const {
    auto it = extent_of_.find(idx.get());
    if (it == extent_of_.end()) return false;
    Expr a = ir::simplify(ir::make_cast(DType::Int64, it->second));
    Expr b = ir::simplify(ir::make_cast(DType::Int64, limit));
    return a.same_as(b) || ir::structural_equal(a, b);
  }

  static Expr zero_of(DType t) {
    if (t.is_float()) return ir::make_float(0, t);
    if (t.is_bool()) return ir::make_bool(false);
    return ir::make_int(0, t);
  }

  static Expr identity_of(ir::ReduceKind kind, DType t) {
    double inf = std::numeric_limits<double>::infinity();
    switch (kind) {
      case ir::ReduceKind::Sum: case ir::ReduceKind::AbsSum: case ir::ReduceKind::AbsMax:
        return zero_of(t);
      case ir::ReduceKind::Max:
        if (t.is_float()) return ir::make_float(t == DType::Float8E4M3 ? -448.0 : -inf, t);
        return ir::make_int(t.is_uint() ? 0 : -(int64_t{1} << (t.bits() - 1)), t);
      case ir::ReduceKind::Min:
        if (t.is_float()) return ir::make_float(t == DType::Float8E4M3 ? 448.0 : inf, t);
        return ir::make_int(t.is_uint() && t.bits() == 64 ? -1
                                                         : (t.is_uint() ? (int64_t{1} << t.bits()) - 1
                                                                        : (int64_t{1} << (t.bits() - 1)) - 1),
                            t);
    }
    return zero_of(t);
  }

  static Expr combine(ir::ReduceKind kind, const Expr& acc, const Expr& x) {
    switch (kind) {
      case ir::ReduceKind::Sum: case ir::ReduceKind::AbsSum: return ir::make_Add(acc, x);
      case ir::ReduceKind::Max: case ir::ReduceKind::AbsMax: return ir::make_Max(acc, x);
      case ir::ReduceKind::Min: return ir::make_Min(acc, x);
    }
    return acc;
  }

  static Expr conjoin(const Expr& a, const Expr& b) {
    if (!b) return a;
    if (!a) return b;
    return ir::make_And(a, b);
  }

  // `0 <= idx < extent`, or null when the analyzer proves it.
  Expr in_range(const Expr& idx_in, const Expr& extent_in) const {
    DType t = promote(idx_in->dtype, extent_in->dtype);
    Expr idx = ir::simplify(ir::make_cast(t, idx_in));
    Expr extent = ir::make_cast(t, extent_in);
    Expr lower = ir::make_GE(idx, ir::make_int(0, t));
    Expr upper = ir::make_LT(idx, extent);
    Expr cond;
    if (!bounds_.can_prove(lower)) cond = lower;
    if (!bounds_.can_prove(upper) && !below_own_extent(idx, extent_in)) cond = conjoin(cond, upper);
    return cond;
  }

  std::vector<Expr> loop_vars(const ir::BufferRegion& r, const std::string& prefix) const {
    std::vector<Expr> vars;
    for (size_t i = 0; i < ir::squeezed_dims(r).size(); ++i)
      vars.push_back(ir::make_var(prefix + std::to_string(i)));
    return vars;
  }

  // Indices for the tile point given by `vars` (one per squeezed dim of r).
  Access access(const ir::BufferRegion& r, const std::vector<Expr>& vars) {
    std::vector<int> dims = ir::squeezed_dims(r);
    Access a;
    size_t v = 0;
    ir::BoundAnalyzer saved = bounds_;
    for (size_t d = 0; d < r.region.size(); ++d) {
      Expr idx = r.region[d].min;
      if (v < dims.size() && dims[v] == static_cast<int>(d)) {
        bind_range(vars[v], ir::make_int(0), r.region[d].extent);
        idx = ir::make_Add(idx, vars[v++]);
      }
      a.indices.push_back(idx);
      a.in_bounds = conjoin(a.in_bounds, in_range(idx, r.buffer->shape[d]));
    }
    bounds_ = saved;
    return a;
  }

  // The last `dims` dims of the tile (after squeezing extent-1 dims; kept
  // extent-1 dims fill up when fewer remain), matching elaboration's check.
  static std::vector<int> tile_dims(const ir::BufferRegion& r, size_t dims) {
    std::vector<int> sq = ir::squeezed_dims(r);
    if (sq.size() >= dims) return sq;
    std::vector<int> last;
    for (size_t d = r.region.size() - dims; d < r.region.size(); ++d) last.push_back(static_cast<int>(d));
    return last;
  }
  static std::vector<Expr> tile_extents(const ir::BufferRegion& r, size_t dims) {
    std::vector<Expr> ext;
    for (int d : tile_dims(r, dims)) ext.push_back(r.region[d].extent);
    return ext;
  }

  Access access_tile(const ir::BufferRegion& r, const std::vector<Expr>& vars, size_t dims) {
    std::vector<int> td = tile_dims(r, dims);
    Access a;
    ir::BoundAnalyzer saved = bounds_;
    for (size_t d = 0; d < r.region.size(); ++d) {
      Expr idx = r.region[d].min;
      for (size_t v = 0; v < td.size(); ++v)
        if (td[v] == static_cast<int>(d)) {
          bind_range(vars[v], ir::make_int(0), r.region[d].extent);
          idx = ir::make_Add(idx, vars[v]);
        }
      a.indices.push_back(idx);
      a.in_bounds = conjoin(a.in_bounds, in_range(idx, r.buffer->shape[d]));
    }
    bounds_ = saved;
    return a;
  }

  Access access_2d(const ir::BufferRegion& r, const Expr& row, const Expr& col) {
    return access_tile(r, {row, col}, 2);
  }

  static Expr guarded_load(const ir::Buffer& b, const Access& a, DType t) {
    Expr value = ir::make_cast(t, ir::make_load(b, a.indices));
    if (!a.in_bounds) return value;
    return ir::make_select(a.in_bounds, value, zero_of(t));
  }

  // Innermost loops of tile ops are independent, so they are marked for
  // vectorization, unless bounds checks guard their accesses: GCC 12 at -O3
  // -march=native was seen to miscompile forced-vectorized loops holding a
  // guarded store, and the guards block vectorization's gains anyway.
  template <typename... Accesses>
  static ir::ForKind innermost_kind(const Accesses&... accesses) {
    bool guarded = (... || accesses.in_bounds.defined());
    return guarded ? ir::ForKind::Serial : ir::ForKind::Vectorized;
  }

  static Stmt nest(const std::vector<Expr>& vars, const std::vector<Expr>& extents, Stmt body,
                   ir::ForKind innermost = ir::ForKind::Vectorized) {
    for (size_t i = vars.size(); i-- > 0;) {
      ir::ForKind kind = i + 1 == vars.size() ? innermost : ir::ForKind::Serial;
      body = ir::make_for(vars[i], ir::make_int(0, vars[i]->dtype), ir::make_cast(vars[i]->dtype, extents[i]),
                          kind, body);
    }
    return body;
  }

  static Stmt located(Stmt s, const SourceLoc& loc) {
    if (auto* seq = s.as<ir::Seq>())
      for (const auto& inner : seq->stmts) ir::with_loc(inner, loc);
    return ir::with_loc(s, loc);
  }

  ir::BoundAnalyzer bounds_;
  std::unordered_map<const ir::ExprNode*, Expr> extent_of_;
};

}  // namespace

ir::Stmt lower_tile_ops(const ir::Stmt& body, const PassContext&) {
  return TileOpLowering().mutate(body);
}

}  // namespace tilec::passes

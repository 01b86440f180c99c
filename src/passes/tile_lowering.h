// What lowering tile ops to element accesses shares across targets: a mutator
// that tracks the ranges of block, loop and let variables, and from them the
// index expressions of a tile op's operands with bounds predicates only where
// in-bounds can't be proven; plus the meaning of reductions (identity, combine).
#pragma once

#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/bound.h"
#include "ir/equal.h"
#include "ir/mutator.h"
#include "ir/region.h"
#include "ir/simplify.h"

namespace tilec::passes {

// Index expressions into one operand of a tile op, for a point of the tile
// given by one loop variable per squeezed dim.
struct Access {
  std::vector<ir::Expr> indices;
  ir::Expr in_bounds;  // null when provably in bounds
};

class TileLowering : public ir::IRMutator {
 protected:
  using Expr = ir::Expr;
  using Stmt = ir::Stmt;

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

  void bind_range(const Expr& var, const Expr& min, const Expr& extent) {
    auto lo = bounds_.bound(min);
    auto n = bounds_.bound(extent);
    if (lo && n && n->max >= 1) {
      bounds_.bind(var, {lo->min, lo->max + n->max - 1});
    } else if (lo) {
      bounds_.bind(var, {lo->min, std::numeric_limits<int32_t>::max()});
    }
    if (ir::is_zero(min)) extent_of_[var.get()] = extent;
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
      // -0.0 + x is x for every float x (+0.0 + -0.0 is +0.0), so compilers drop the addition of a
      // partial sum's first element to it
      case ir::ReduceKind::Sum: case ir::ReduceKind::AbsSum:
        return t.is_float() ? ir::make_float(-0.0, t) : zero_of(t);
      case ir::ReduceKind::AbsMax:
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

  Access access_tile(const ir::BufferRegion& r, const std::vector<Expr>& vars, size_t dims) {
    std::vector<int> td = ir::tile_dims(r, dims);
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

  static Stmt located(Stmt s, const SourceLoc& loc) {
    if (auto* seq = s.as<ir::Seq>())
      for (const auto& inner : seq->stmts) ir::with_loc(inner, loc);
    return ir::with_loc(s, loc);
  }

  ir::BoundAnalyzer bounds_;
  std::unordered_map<const ir::ExprNode*, Expr> extent_of_;
};

}  // namespace tilec::passes

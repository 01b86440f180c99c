#include "op/reduce.h"

#include "ir/region.h"
#include "op/check.h"
#include "op/lowering.h"

namespace tilec::op {

using ir::Expr;
using ir::Stmt;

Regions regions(const ir::Reduce& op) {
  Regions r{{op.src}, {op.dst}};
  if (!op.clear) r.reads.push_back(op.dst);
  return r;
}

// How the kernel calls the op: T.reduce_sum, T.reduce_max, ...
static std::string call_name(const ir::Reduce& op) {
  return std::string("T.reduce_") + ir::reduce_kind_name(op.reduce_kind);
}

LayoutConstraints layout_constraints(const ir::Reduce& op) {
  if (is_fragment(op.src.buffer)) {
    std::vector<int> keep;
    for (int d = 0; d < static_cast<int>(op.src.region.size()); ++d)
      if (d != op.dim) keep.push_back(d);
    return {{}, {{op.src.buffer, op.dst.buffer, keep, op.loc, "a reduction"}}, {}};
  }
  auto ed = const_extents(ir::squeezed_extents(op.dst));
  if (ed.empty() && !ir::squeezed_extents(op.dst).empty()) return replicated({op.dst.buffer}, op.loc);
  return {{Site{ed, {tile_access(op.dst, iota(ed.size()))}, op.loc}}, {}, {}};
}

int normalized_dim(const ir::Reduce& op, int64_t dim, const SourceLoc& dim_loc) {
  return op::normalized_dim(op.src, dim, dim_loc, call_name(op));
}

void check(const ir::Reduce& op, const SourceLoc& dst_loc) {
  // A fragment's result is laid out as its source's rows (layout_constraints): only the reduced
  // dim may be a range.
  if (op.src.buffer->scope == ir::MemoryScope::Fragment)
    for (size_t d = 0; d < op.src.region.size(); ++d) {
      const ir::Range& r = op.src.region[d];
      if (static_cast<int>(d) != op.dim &&
          (!ir::is_zero(ir::simplify(r.min)) ||
           !ir::structural_equal(ir::simplify(r.extent), ir::simplify(op.src.buffer->shape[d]))))
        error_at(op.loc, "a reduction of a fragment takes whole lines of '" + op.src.buffer->name + "': dim " +
                             std::to_string(d) + " is sliced; only the reduced dim " + std::to_string(op.dim) +
                             " may be a range");
    }
  ir::BufferRegion expected = op.src;
  expected.region.erase(expected.region.begin() + op.dim);
  auto ee = ir::squeezed_extents(expected), ed = ir::squeezed_extents(op.dst);
  bool ok = ee.size() == ed.size();
  for (size_t i = 0; ok && i < ee.size(); ++i) {
    bool different;
    if (!same_extent(ee[i], ed[i], &different)) ok = false;
  }
  if (!ok)
    error_at(dst_loc, call_name(op) + ": 'out' (" + op.dst.buffer->name + ") is " + extents_text(ed) +
                          " but reducing '" + op.src.buffer->name + "' over dim " + std::to_string(op.dim) +
                          " gives " + extents_text(ee));
}

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

}  // namespace tilec::op

#include "op/cumsum.h"

#include <algorithm>

#include "ir/region.h"
#include "ir/substitute.h"
#include "op/check.h"
#include "op/copy.h"
#include "op/lowering.h"

namespace tilec::op {

using ir::Expr;
using ir::Stmt;

Regions regions(const ir::CumSum& op) { return {{op.src}, {op.dst}}; }

LayoutConstraints layout_constraints(const ir::CumSum& op) {
  if (!is_fragment(op.src.buffer) && !is_fragment(op.dst.buffer)) return {};
  std::vector<int> squeezed = ir::squeezed_dims(op.src);
  auto at = std::find(squeezed.begin(), squeezed.end(), op.dim);
  if (at == squeezed.end()) return tile_constraints(op.dst, {op.src, op.dst}, op.loc);  // lowered as a copy
  auto extents = const_extents(ir::squeezed_extents(op.src));
  if (extents.size() != squeezed.size() || extents.size() == 1)
    return replicated({op.src.buffer, op.dst.buffer}, op.loc);
  const int scan = static_cast<int>(at - squeezed.begin());
  extents.erase(extents.begin() + scan);
  std::vector<int> site_dims;
  for (int k = 0; k < static_cast<int>(squeezed.size()); ++k) site_dims.push_back(k < scan ? k : k == scan ? -1 : k - 1);
  return {{Site{extents, {tile_access(op.src, site_dims), tile_access(op.dst, site_dims)}, op.loc}}, {}, {}};
}

void check(const ir::CumSum& op, const SourceLoc& src_loc, const SourceLoc& dst_loc) {
  auto on_chip = [](const ir::BufferRegion& r, const SourceLoc& loc, const char* name) {
    ir::MemoryScope scope = r.buffer->scope;
    if (scope != ir::MemoryScope::Shared && scope != ir::MemoryScope::Fragment)
      error_at(loc, std::string("T.cumsum: '") + name + "' (" + r.buffer->name + ") is a " +
                        ir::scope_name(scope) + " buffer; T.cumsum scans shared or fragment buffers "
                        "(T.copy the tile into one first)");
  };
  on_chip(op.src, src_loc, "src");
  on_chip(op.dst, dst_loc, "dst");
  if (op.src.buffer->dtype.is_bool()) error_at(src_loc, "T.cumsum: bool buffers cannot be summed");
  if (op.dst.buffer->dtype != op.src.buffer->dtype)
    error_at(dst_loc, std::string("T.cumsum: 'dst' (") + op.dst.buffer->name + ") is " +
                          op.dst.buffer->dtype.name() + " but 'src' (" + op.src.buffer->name + ") is " +
                          op.src.buffer->dtype.name() + "; both must have one dtype");
  check_same_tile(op.dst, dst_loc, op.src, "T.cumsum", "destination", "source");
}

Stmt lower(const ir::CumSum& op, const Stmt& self, Lowering& l) {
  std::vector<int> squeezed = ir::squeezed_dims(op.src);
  auto at = std::find(squeezed.begin(), squeezed.end(), op.dim);
  if (at == squeezed.end()) {
    // A scan along an extent-1 dim: every element is its own sum.
    ir::Copy copy;
    copy.src = op.src;
    copy.dst = op.dst;
    copy.loc = op.loc;
    return lower(copy, self, l);
  }
  const size_t scan = static_cast<size_t>(at - squeezed.begin());
  std::vector<Expr> vars = l.loop_vars(op.src, "i");
  Lowering::Access src = l.access(op.src, vars), dst = l.access(op.dst, vars);
  const DType t = op.dst.buffer->dtype;
  // Each element is its source plus the sum stored just before it in dst, so the scan needs
  // no register of its own (a shared scan's body then writes shared memory only, and the
  // threads that replicate a line under lower_to_threads sit out instead of racing).
  const Expr& k = vars[scan];
  Expr extent = ir::make_cast(k->dtype, op.src.region[op.dim].extent), one = ir::make_int(1, k->dtype);
  Expr before = op.reverse ? ir::make_Add(k, one) : ir::make_Sub(k, one);
  Lowering::Access prior;
  for (const Expr& idx : dst.indices) prior.indices.push_back(ir::substitute(idx, k, before));
  if (dst.in_bounds) prior.in_bounds = ir::substitute(dst.in_bounds, k, before);
  // The loop counts q from the line's first element: k itself, or k = extent - 1 - q.
  Expr q = op.reverse ? ir::make_var("r", k->dtype) : k;
  Expr x = l.guarded_load(op.src.buffer, src, t);
  Stmt step = ir::make_if(ir::make_EQ(q, ir::make_int(0, k->dtype)), ir::make_store(op.dst.buffer, dst.indices, x),
                          ir::make_store(op.dst.buffer, dst.indices,
                                         ir::make_Add(l.guarded_load(op.dst.buffer, prior, t), x)));
  if (dst.in_bounds) step = ir::make_if(dst.in_bounds, step);
  if (op.reverse) step = ir::substitute(step, ir::VarMap{{k.get(), ir::make_Sub(ir::make_Sub(extent, one), q)}});
  // Unrolled on a GPU target, so that a fragment's registers are indexed by constants.
  Stmt line = ir::with_loc(ir::make_for(q, ir::make_int(0, k->dtype), extent,
                                        l.threaded() ? ir::ForKind::Unrolled : ir::ForKind::Serial, step),
                           op.loc);
  std::vector<Expr> line_vars = vars, line_extents = ir::squeezed_extents(op.src);
  line_vars.erase(line_vars.begin() + scan);
  line_extents.erase(line_extents.begin() + scan);
  if (line_vars.empty() && l.threaded()) {
    // One line: a T.Parallel loop of one element, so that one thread scans a shared line
    // (and each thread its own copy of a fragment that every thread holds).
    line_vars.push_back(ir::make_var("i"));
    line_extents.push_back(ir::make_int(1));
  }
  return l.located(l.nest(line_vars, line_extents, line, ir::ForKind::Serial), op.loc);
}

}  // namespace tilec::op

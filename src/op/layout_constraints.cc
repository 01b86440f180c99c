#include "op/layout_constraints.h"

#include <algorithm>

#include "ir/region.h"
#include "ir/simplify.h"

namespace tilec::op {

using ir::Expr;
using ir::Fragment;

int64_t default_run(const std::vector<int64_t>& shape, int64_t threads, int64_t bytes) {
  int64_t elements = 1;
  for (int64_t e : shape) elements *= e;
  int64_t run = 1;
  while (run * 2 * std::max<int64_t>(bytes, 1) <= 16 && run * 2 * threads <= elements && !shape.empty() &&
         shape.back() % (run * 2) == 0)
    run *= 2;
  return run;
}

std::vector<int64_t> const_shape(const ir::Buffer& b) {
  std::vector<int64_t> shape;
  for (const auto& d : b->shape) {
    int64_t v;
    if (!ir::is_const_int(ir::simplify(d), &v))
      error_at(b->loc, "fragment '" + b->name + "' needs a constant shape on the GPU (each thread holds "
                       "a fixed part of it in registers)");
    shape.push_back(v);
  }
  return shape;
}

FragmentAccess tile_access(const ir::BufferRegion& r, const std::vector<int>& site_dims) {
  FragmentAccess a{r.buffer, std::vector<int>(r.region.size(), -1)};
  std::vector<int> sq = ir::squeezed_dims(r);
  for (size_t k = 0; k < sq.size() && k < site_dims.size(); ++k) {
    const ir::Range& range = r.region[sq[k]];
    Expr extent = ir::simplify(range.extent);
    Expr full = ir::simplify(r.buffer->shape[sq[k]]);
    int64_t e, f;
    if (ir::is_zero(ir::simplify(range.min)) && ir::is_const_int(extent, &e) && ir::is_const_int(full, &f) &&
        e == f)
      a.dims[sq[k]] = site_dims[k];
  }
  return a;
}

std::vector<int64_t> const_extents(const std::vector<Expr>& extents) {
  std::vector<int64_t> out;
  for (const auto& e : extents) {
    int64_t v;
    if (!ir::is_const_int(ir::simplify(e), &v)) return {};
    out.push_back(v);
  }
  return out;
}

std::vector<int> iota(size_t n) {
  std::vector<int> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<int>(i);
  return v;
}

bool owned_under(const Fragment& frag, const std::vector<int>& dims, const Fragment& loop) {
  for (const auto& d : frag.digits()) {
    if (!d.on_thread || d.dim < 0) continue;
    int k = dims[d.dim];
    if (k < 0) return false;
    bool found = false;
    for (const auto& l : loop.digits())
      if (l.on_thread && l.dim == k && l.place == d.place && l.radix == d.radix && l.stride == d.stride)
        found = true;
    if (!found) return false;
  }
  return true;
}

std::optional<Fragment> layout_from(const FragmentAccess& a, const Fragment& frag,
                                    const std::vector<int64_t>& extents) {
  std::vector<int> keep, site_dims;
  for (size_t d = 0; d < a.dims.size(); ++d) {
    if (a.dims[d] < 0) continue;
    if (frag.shape()[d] != extents[a.dims[d]]) return std::nullopt;
    keep.push_back(static_cast<int>(d));
    site_dims.push_back(a.dims[d]);
  }
  for (const auto& digit : frag.digits())
    if (digit.on_thread && digit.dim >= 0 && a.dims[digit.dim] < 0) return std::nullopt;
  return ir::extend_fragment(frag.project(keep), site_dims, extents);
}

std::optional<Fragment> access_layout(const Fragment& layout, const FragmentAccess& a,
                                      const std::vector<int64_t>& extents) {
  std::vector<int64_t> shape = const_shape(a.buffer);
  std::vector<int> keep, dims;
  for (size_t d = 0; d < a.dims.size(); ++d) {
    if (a.dims[d] < 0) continue;
    if (shape[d] != extents[a.dims[d]]) return std::nullopt;
    keep.push_back(a.dims[d]);
    dims.push_back(static_cast<int>(d));
  }
  return ir::extend_fragment(layout.project(keep), dims, shape);
}

std::optional<Fragment> site_layout(const Site& site,
                                    const std::function<const Fragment*(const ir::Buffer&)>& layout_of) {
  std::optional<Fragment> partial;
  for (const auto& a : site.accesses) {
    const Fragment* f = layout_of(a.buffer);
    if (!f) continue;
    auto l = layout_from(a, *f, site.extents);
    if (!l) continue;
    bool full = true;
    for (size_t k = 0; k < site.extents.size(); ++k)
      if (std::find(a.dims.begin(), a.dims.end(), static_cast<int>(k)) == a.dims.end()) full = false;
    if (full) return l;
    if (a.read_only && f->replicated()) continue;
    if (!partial) partial = l;
  }
  return partial;
}

LayoutConstraints replicated(const std::vector<ir::Buffer>& buffers, const SourceLoc& loc) {
  LayoutConstraints c;
  for (const auto& b : buffers)
    if (is_fragment(b)) c.replicated.push_back({b, loc});
  return c;
}

LayoutConstraints tile_constraints(const ir::BufferRegion& domain, const std::vector<ir::BufferRegion>& operands,
                                   const SourceLoc& loc) {
  bool any = false;
  for (const auto& r : operands) any |= is_fragment(r.buffer);
  if (!any) return {};
  auto extents = const_extents(ir::squeezed_extents(domain));
  if (extents.size() != ir::squeezed_extents(domain).size()) {
    std::vector<ir::Buffer> buffers;
    for (const auto& r : operands) buffers.push_back(r.buffer);
    return replicated(buffers, loc);
  }
  Site site{extents, {}, loc};
  for (const auto& r : operands) site.accesses.push_back(tile_access(r, iota(extents.size())));
  return {{site}, {}, {}};
}

}  // namespace tilec::op

#include "op/reduce.h"

#include "ir/region.h"
#include "op/check.h"

namespace tilec::op {

Regions regions(const ir::Reduce& op) {
  Regions r{{op.src}, {op.dst}};
  if (!op.clear) r.reads.push_back(op.dst);
  return r;
}

// How the kernel calls the op: T.reduce_sum, T.reduce_max, ...
static std::string call_name(const ir::Reduce& op) {
  return std::string("T.reduce_") + ir::reduce_kind_name(op.reduce_kind);
}

int normalized_dim(const ir::Reduce& op, int64_t dim, const SourceLoc& dim_loc) {
  int64_t rank = static_cast<int64_t>(op.src.region.size());
  if (dim < -rank || dim >= rank)
    error_at(dim_loc, call_name(op) + ": dim " + std::to_string(dim) + " is out of range for the " +
                          std::to_string(rank) + "-D buffer '" + op.src.buffer->name + "'");
  return static_cast<int>(dim < 0 ? dim + rank : dim);
}

void check(const ir::Reduce& op, const SourceLoc& dst_loc) {
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

}  // namespace tilec::op

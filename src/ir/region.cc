#include "ir/region.h"

#include "ir/simplify.h"

namespace tilec::ir {

std::vector<int> squeezed_dims(const BufferRegion& region) {
  std::vector<int> dims;
  for (size_t d = 0; d < region.region.size(); ++d)
    // A slice's extent is written as its end minus its start: ((bx + 1) * m - bx * m) is 1.
    if (!is_one(simplify(region.region[d].extent))) dims.push_back(static_cast<int>(d));
  return dims;
}

std::vector<Expr> squeezed_extents(const BufferRegion& region) {
  std::vector<Expr> extents;
  for (int d : squeezed_dims(region)) extents.push_back(region.region[d].extent);
  return extents;
}

std::vector<int> tile_dims(const BufferRegion& region, size_t dims) {
  std::vector<int> squeezed = squeezed_dims(region);
  if (squeezed.size() >= dims) return squeezed;
  std::vector<int> last;
  for (size_t d = region.region.size() - dims; d < region.region.size(); ++d) last.push_back(static_cast<int>(d));
  return last;
}

std::vector<Expr> tile_extents(const BufferRegion& region, size_t dims) {
  std::vector<Expr> extents;
  for (int d : tile_dims(region, dims)) extents.push_back(region.region[d].extent);
  return extents;
}

BufferRegion full_region(const Buffer& buffer) {
  BufferRegion r{buffer, {}};
  for (const auto& dim : buffer->shape) r.region.push_back({make_int(0, dim->dtype), dim});
  return r;
}

}  // namespace tilec::ir

#include "op/check.h"

#include "ir/printer.h"
#include "ir/region.h"
#include "ir/simplify.h"

namespace tilec::op {

std::string extents_text(const std::vector<ir::Expr>& extents) {
  std::string s = "(";
  for (size_t i = 0; i < extents.size(); ++i)
    s += (i ? ", " : "") + ir::to_string(ir::simplify(extents[i]));
  return s + (extents.size() == 1 ? ",)" : ")");
}

bool same_extent(const ir::Expr& a, const ir::Expr& b, bool* definitely_different) {
  ir::Expr diff = ir::simplify(ir::make_Sub(ir::make_cast(DType::Int64, a), ir::make_cast(DType::Int64, b)));
  int64_t v;
  if (ir::is_const_int(diff, &v)) {
    *definitely_different = v != 0;
    return v == 0;
  }
  *definitely_different = false;
  return false;
}

void check_same_tile(const ir::BufferRegion& a, const SourceLoc& a_loc, const ir::BufferRegion& b,
                     const std::string& fn, const std::string& a_name, const std::string& b_name) {
  auto ea = ir::squeezed_extents(a), eb = ir::squeezed_extents(b);
  bool mismatch = ea.size() != eb.size();
  bool unknown = false;
  for (size_t i = 0; !mismatch && i < ea.size(); ++i) {
    bool different;
    if (!same_extent(ea[i], eb[i], &different)) {
      if (different) mismatch = true;
      else unknown = true;
    }
  }
  if (mismatch)
    error_at(a_loc, fn + ": shapes differ: " + a_name + " '" + a.buffer->name + "' is " +
                        extents_text(ea) + " but " + b_name + " '" + b.buffer->name + "' is " +
                        extents_text(eb));
  if (unknown)
    error_at(a_loc, fn + ": cannot prove that " + a_name + " '" + a.buffer->name + "' " +
                        extents_text(ea) + " and " + b_name + " '" + b.buffer->name + "' " +
                        extents_text(eb) + " have the same shape; write both with the same extents");
}

void require_tile_dims(const ir::BufferRegion& r, const SourceLoc& loc, const std::string& fn,
                       const std::string& name, size_t dims) {
  size_t n = ir::squeezed_dims(r).size();
  if (n > dims || r.region.size() < dims)
    error_at(loc, fn + ": '" + name + "' (" + r.buffer->name + ") must be a " + std::to_string(dims) +
                      "-D tile, but its tile is " + extents_text(ir::squeezed_extents(r)));
}

int normalized_dim(const ir::BufferRegion& r, int64_t dim, const SourceLoc& dim_loc, const std::string& fn) {
  int64_t rank = static_cast<int64_t>(r.region.size());
  if (dim < -rank || dim >= rank)
    error_at(dim_loc, fn + ": dim " + std::to_string(dim) + " is out of range for the " + std::to_string(rank) +
                          "-D buffer '" + r.buffer->name + "'");
  return static_cast<int>(dim < 0 ? dim + rank : dim);
}

void check_dim(const ir::Expr& a, const ir::Expr& b, const SourceLoc& loc, const std::string& message) {
  bool different;
  if (!same_extent(a, b, &different) && different)
    error_at(loc, message + " (" + ir::to_string(ir::simplify(a)) + " vs " +
                      ir::to_string(ir::simplify(b)) + ")");
}

}  // namespace tilec::op

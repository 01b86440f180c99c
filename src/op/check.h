// What the units' argument checks share: tile extents, whether two extents agree, and the
// located errors for operands whose tiles don't fit the op. `fn` names the op as the kernel
// calls it ("T.copy").
#pragma once

#include <string>
#include <vector>

#include "base/diagnostics.h"
#include "ir/ir.h"

namespace tilec::op {

// "(64, 32)": extents as the errors print them.
std::string extents_text(const std::vector<ir::Expr>& extents);

// Whether two extents are provably equal; `definitely_different` when both are
// constants that differ.
bool same_extent(const ir::Expr& a, const ir::Expr& b, bool* definitely_different);

// That `a` and `b` have the same tile (extent-1 dims dropped): an error at `a_loc` when they
// differ or their equality can't be proven.
void check_same_tile(const ir::BufferRegion& a, const SourceLoc& a_loc, const ir::BufferRegion& b,
                     const std::string& fn, const std::string& a_name, const std::string& b_name);

// That operand `name` of `r` is a tile of at most `dims` dims (after dropping extent-1 dims)
// in a region of at least `dims`.
void require_tile_dims(const ir::BufferRegion& r, const SourceLoc& loc, const std::string& fn,
                       const std::string& name, size_t dims);

// `dim` (Python's: negative counts from the end) as an index into the dims of `r`; an error at
// `dim_loc` when r's buffer has no such dim.
int normalized_dim(const ir::BufferRegion& r, int64_t dim, const SourceLoc& dim_loc, const std::string& fn);

// An error `message (a vs b)` at `loc` when two extents are constants that differ.
void check_dim(const ir::Expr& a, const ir::Expr& b, const SourceLoc& loc, const std::string& message);

}  // namespace tilec::op

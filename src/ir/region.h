// Shapes of buffer regions as tile ops see them.
#pragma once

#include <vector>

#include "ir/ir.h"

namespace tilec::ir {

// The dims of `region` whose extent is not the constant 1, in order: a tile op
// on A[i, 0:32, 0:64] works on a 32x64 tile.
std::vector<int> squeezed_dims(const BufferRegion& region);
std::vector<Expr> squeezed_extents(const BufferRegion& region);

// The dims a tile op of `dims` dims works on in `region`: its squeezed dims, or, when
// fewer than `dims` remain, its last `dims` dims (kept extent-1 dims fill up).
std::vector<int> tile_dims(const BufferRegion& region, size_t dims);
std::vector<Expr> tile_extents(const BufferRegion& region, size_t dims);

// The region covering all of `buffer`.
BufferRegion full_region(const Buffer& buffer);

}  // namespace tilec::ir

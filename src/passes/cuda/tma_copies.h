// Which copies the Tensor Memory Accelerator moves (cp.async.bulk.tensor, sm_90a): a whole 2-D
// shared panel tile (panel_bytes_of below) and a tile of a global tensor of at most 5
// dims with constant extents (one of them the tile's rows, the innermost its columns, the rest
// 1) whose strides are constant multiples of 16 bytes, in the same dtype, and which no
// T.annotate_layout laid out. Loads are made by warp_specialize; a store is a T.copy of such a
// shared tile to global memory that select_instructions chose TMA for, issued by one thread
// (lower_to_threads), the writers' generic stores ordered before it by a proxy fence and a
// barrier (insert_barriers).
#pragma once

#include <optional>

#include "passes/pass.h"

namespace tilec::passes {

// The shared tile's rows, columns, element bytes and the width of its panels (panel_bytes_of).
struct TmaTile {
  int64_t rows = 0, cols = 0, bytes = 0, panel_bytes = 0;
};

// The shape of a TMA copy between `shared` and `global`, or nullopt when TMA can't move it.
std::optional<TmaTile> tma_tile(const ir::BufferRegion& shared, const ir::BufferRegion& global);

// The widest panels shared buffer `b`'s tile can be cut into, whatever layout it has: the
// widest of 128, 64, 32 and 16 bytes that divides its rows' bytes, or 0 when it can't be cut
// so (dims not constant, rows not a multiple of 8, rows not whole 16-byte chunks).
int64_t panel_width_that_fits(const ir::BufferNode& b);

// The width of the panels that shared buffer `b` is stored in when TMA or wgmma use it
// (device/cuda/panels.h): panel_width_that_fits (so TMA's box and wgmma's swizzle mode span a
// panel), or 0 when it can't be cut so or a user layout (T.annotate_layout) puts its elements
// elsewhere than those panels.
int64_t panel_bytes_of(const ir::BufferNode& b);

}  // namespace tilec::passes

// Which copies the Tensor Memory Accelerator moves (cp.async.bulk.tensor, sm_90a): whole panels
// of a 2-D shared panel tile (whole_panel_columns, panel_bytes_of below), or of one tile of a
// stack of them (the leading dims of extent 1), and a tile of a global tensor of at most 5
// dims with constant extents (one of them the tile's rows, the innermost its columns, the rest
// 1) whose strides are constant multiples of 16 bytes and whose first column provably starts
// on a 16-byte boundary, in the same dtype, and which no
// T.annotate_layout laid out. Loads are made by warp_specialize and T.tma_copy; a store is a T.copy of such a
// shared tile to global memory that select_instructions chose TMA for, issued by one thread
// (lower_to_threads), the writers' generic stores ordered before it by a proxy fence and a
// barrier (insert_barriers).
#pragma once

#include <optional>

#include "ir/substitute.h"
#include "passes/pass.h"

namespace tilec::passes {

// The shared tile's rows, columns, element bytes and the width of its panels (panel_bytes_of).
struct TmaTile {
  int64_t rows = 0, cols = 0, bytes = 0, panel_bytes = 0;
};

// The shape of a TMA copy between `shared` and `global`, or nullopt when TMA can't move it.
// `lets` (ir::let_values of the kernel) say what the names in the global tile's corner stand for.
std::optional<TmaTile> tma_tile(const ir::BufferRegion& shared, const ir::BufferRegion& global,
                                const ir::VarMap& lets);

// Whether `r` is whole panels of its shared buffer's panel tile: every row, and columns from a
// panel's first to a panel's last (of one tile of a stack). Its panels are then a panel tile of
// their own, at the same stride: Q_shared[:, :512] and Q_shared[:, 512:] of a 64 x 576 tile, as
// DSA's sparse MLA splits its Q along K; KV_shared[s, :, :256] of a 64 x 512 stage, as MLA
// decode splits its V (a B stored K x N) along N; KV_s[:, j * 64:(j + 1) * 64], a panel a loop
// picks (its bounds the program's to keep).
bool whole_panel_columns(const ir::BufferRegion& r);

// The widest panels shared buffer `b`'s tile can be cut into, whatever layout it has: the
// widest of 128, 64, 32 and 16 bytes that divides its rows' bytes, or 0 when it can't be cut
// so (dims not constant, rows not a multiple of 8, rows not whole 16-byte chunks). A tile of
// one row (a step's LSE values) takes 16-byte panels, unswizzled, when the row is whole
// 128-byte lines.
int64_t panel_width_that_fits(const ir::BufferNode& b);

// The width of the panels that shared buffer `b` is stored in when TMA or wgmma use it
// (device/cuda/panels.h): panel_width_that_fits (so TMA's box and wgmma's swizzle mode span a
// panel), or 0 when it can't be cut so or a user layout (T.annotate_layout) puts its elements
// elsewhere than those panels.
int64_t panel_bytes_of(const ir::BufferNode& b);

}  // namespace tilec::passes

// Which copies the Tensor Memory Accelerator moves (cp.async.bulk.tensor, sm_90a): a whole 2-D
// shared panel tile (infer_layout.h, panel_bytes_of) and a tile of a global tensor of at most 5
// dims with constant extents (one of them the tile's rows, the innermost its columns, the rest
// 1) whose strides are constant multiples of 16 bytes, in the same dtype. Loads are made by
// warp_specialize; a store is a T.copy of such a shared tile to global memory, issued by one
// thread (lower_to_threads), the writers' generic stores ordered before it by a proxy fence
// and a barrier (insert_barriers).
#pragma once

#include <optional>

#include "passes/pass.h"

namespace tilec::passes {

// The shared tile's rows, columns and element bytes.
struct TmaTile {
  int64_t rows = 0, cols = 0, bytes = 0;
};

// The shape of a TMA copy between `shared` and `global`, or nullopt when TMA can't move it.
std::optional<TmaTile> tma_tile(const ir::BufferRegion& shared, const ir::BufferRegion& global);

// Whether `copy` is a TMA store under ctx's pass configs ("tilec.tma_store", in the
// contiguous variant, whose strides are known).
bool is_tma_store(const ir::Copy& copy, const PassContext& ctx);

}  // namespace tilec::passes

// tilec CUDA device support, part 6: which tile a block works on -- T.use_swizzle's
// rasterized_block (gpu/blocks.h), and the tiles of a persistent kernel's blocks.
#pragma once

#include "cuda/types.h"
#include "gpu/blocks.h"

namespace tilec_cuda {

// Persistent kernels (KernelLaunch::persistent): at most one wave of blocks on a 1-D grid;
// block b works on tiles b, b + gridDim.x, ... of the kernel's grid, each at the position
// tile_block_x / _y give it (T.use_swizzle's order).
__device__ __forceinline__ int persistent_first() { return static_cast<int>(blockIdx.x); }
__device__ __forceinline__ int persistent_stride() { return static_cast<int>(gridDim.x); }
template <int Panel, bool Columns>
__device__ __forceinline__ int tile_block_x(int tile, int grid_x, int grid_y) {
  return static_cast<int>(rasterize<Panel, Columns>(tile, grid_x, grid_y).x);
}
template <int Panel, bool Columns>
__device__ __forceinline__ int tile_block_y(int tile, int grid_x, int grid_y) {
  return static_cast<int>(rasterize<Panel, Columns>(tile, grid_x, grid_y).y);
}

}  // namespace tilec_cuda

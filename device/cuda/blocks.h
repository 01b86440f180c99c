// tilec CUDA device support, part 6: which tile a block works on.
//
// rasterized_block<Panel, Columns>() is T.use_swizzle(Panel): blocks start in launch order
// (x fastest), and consecutive ones walk down a panel of Panel grid rows column by column,
// the next panel walking back the other way. The blocks resident at one time then cover a few
// rows and columns of tiles rather than one long row: in a GEMM they share A's and B's tiles
// in L2. Columns: the same with the grid's axes swapped. A bijection on the grid.
#pragma once

namespace tilec_cuda {

struct block_index {
  unsigned x, y;
};

// The grid position that the block launched `launched`-th (x fastest) of an across x down grid
// takes under T.use_swizzle(Panel) (see above; Columns: the grid is down x across).
template <int Panel, bool Columns>
__device__ __forceinline__ block_index rasterize(unsigned launched, unsigned grid_x, unsigned grid_y) {
  const unsigned across = Columns ? grid_y : grid_x;  // the axis a panel runs along
  const unsigned down = Columns ? grid_x : grid_y;    // the axis panels cut
  const unsigned panel = launched / (Panel * across), offset = launched % (Panel * across);
  const unsigned rows = min(static_cast<unsigned>(Panel), down - panel * Panel);  // the last is short
  unsigned a = offset / rows;
  const unsigned d = panel * Panel + offset % rows;
  if (panel % 2 == 1) a = across - 1 - a;
  return Columns ? block_index{d, a} : block_index{a, d};
}

template <int Panel, bool Columns>
__device__ __forceinline__ block_index rasterized_block() {
  return rasterize<Panel, Columns>(blockIdx.y * gridDim.x + blockIdx.x, gridDim.x, gridDim.y);
}

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

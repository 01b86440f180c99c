// tilec GPU device support shared by device/cuda/ and device/hip/, part 4: which tile a block
// works on. Included by cuda/blocks.h and hip/tilec_hip.h into their namespace (gpu/types.h says
// how).
//
// rasterized_block<Panel, Columns>() is T.use_swizzle(Panel): blocks start in launch order
// (x fastest), and consecutive ones walk down a panel of Panel grid rows column by column,
// the next panel walking back the other way. The blocks resident at one time then cover a few
// rows and columns of tiles rather than one long row: in a GEMM they share A's and B's tiles
// in L2. Columns: the same with the grid's axes swapped. A bijection on the grid; a 3-D grid's
// blocks are ordered so within each z.
#pragma once

#include "gpu/types.h"

namespace TILEC_GPU_NAMESPACE {

struct block_index {
  unsigned x, y, z;
};

// The grid position that the block launched `launched`-th (x fastest) of an across x down grid
// takes under T.use_swizzle(Panel) (see above; Columns: the grid is down x across).
template <int Panel, bool Columns>
__device__ __forceinline__ block_index rasterize(unsigned launched, unsigned grid_x, unsigned grid_y) {
  const unsigned across = Columns ? grid_y : grid_x;  // the axis a panel runs along
  const unsigned down = Columns ? grid_x : grid_y;    // the axis panels cut
  const unsigned panel = launched / (Panel * across), offset = launched % (Panel * across);
  const unsigned last_rows = down - panel * Panel;  // the last panel is short
  const unsigned rows = last_rows < static_cast<unsigned>(Panel) ? last_rows : static_cast<unsigned>(Panel);
  unsigned a = offset / rows;
  const unsigned d = panel * Panel + offset % rows;
  if (panel % 2 == 1) a = across - 1 - a;
  return Columns ? block_index{d, a, 0} : block_index{a, d, 0};
}

template <int Panel, bool Columns>
__device__ __forceinline__ block_index rasterized_block() {
  block_index b = rasterize<Panel, Columns>(blockIdx.y * gridDim.x + blockIdx.x, gridDim.x, gridDim.y);
  b.z = blockIdx.z;
  return b;
}

}  // namespace TILEC_GPU_NAMESPACE

// tilec HIP device support, part 4: which tile a block works on.
//
// rasterized_block<Panel, Columns>() is T.use_swizzle(Panel), as in device/cuda/blocks.h:
// consecutive blocks walk down a panel of Panel grid rows column by column, the next panel
// walking back the other way (Columns: the grid's axes swapped). A bijection on the grid.
#pragma once

namespace tilec_hip {

struct block_index {
  unsigned x, y;
};

template <int Panel, bool Columns>
__device__ __forceinline__ block_index rasterize(unsigned launched, unsigned grid_x, unsigned grid_y) {
  const unsigned across = Columns ? grid_y : grid_x;
  const unsigned down = Columns ? grid_x : grid_y;
  const unsigned panel = launched / (Panel * across), offset = launched % (Panel * across);
  const unsigned last_rows = down - panel * Panel;
  const unsigned rows = last_rows < static_cast<unsigned>(Panel) ? last_rows : static_cast<unsigned>(Panel);
  unsigned a = offset / rows;
  const unsigned d = panel * Panel + offset % rows;
  if (panel % 2 == 1) a = across - 1 - a;
  return Columns ? block_index{d, a} : block_index{a, d};
}

template <int Panel, bool Columns>
__device__ __forceinline__ block_index rasterized_block() {
  return rasterize<Panel, Columns>(blockIdx.y * gridDim.x + blockIdx.x, gridDim.x, gridDim.y);
}

}  // namespace tilec_hip

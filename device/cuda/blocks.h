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

template <int Panel, bool Columns>
__device__ __forceinline__ block_index rasterized_block() {
  const unsigned across = Columns ? gridDim.y : gridDim.x;  // the axis a panel runs along
  const unsigned down = Columns ? gridDim.x : gridDim.y;    // the axis panels cut
  const unsigned launched = blockIdx.y * gridDim.x + blockIdx.x;
  const unsigned panel = launched / (Panel * across), offset = launched % (Panel * across);
  const unsigned rows = min(static_cast<unsigned>(Panel), down - panel * Panel);  // the last is short
  unsigned a = offset / rows;
  const unsigned d = panel * Panel + offset % rows;
  if (panel % 2 == 1) a = across - 1 - a;
  return Columns ? block_index{d, a} : block_index{a, d};
}

}  // namespace tilec_cuda

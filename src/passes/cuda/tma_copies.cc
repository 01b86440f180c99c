#include "passes/cuda/tma_copies.h"

#include <numeric>

#include "ir/linear_form.h"
#include "ir/shared_layout.h"
#include "ir/simplify.h"

namespace tilec::passes {

std::optional<TmaTile> tma_tile(const ir::BufferRegion& shared, const ir::BufferRegion& global,
                                const ir::VarMap& lets) {
  const ir::Buffer& tile_buffer = shared.buffer;
  const ir::Buffer& tensor = global.buffer;
  const size_t srank = tile_buffer->shape.size();
  if (tile_buffer->dtype != tensor->dtype || srank < 2) return std::nullopt;
  // A tensor map describes strided rows; a laid-out tensor's elements are elsewhere.
  if (tensor->layout || tensor->view_of) return std::nullopt;  // a view has no tensor map of its own
  TmaTile tile;
  tile.panel_bytes = panel_bytes_of(*tile_buffer);
  if (!tile.panel_bytes) return std::nullopt;
  // Whole panels of one tile (of a stack of them: a pipeline's stages).
  if (!whole_panel_columns(shared)) return std::nullopt;
  ir::is_const_int(ir::simplify(tile_buffer->shape[srank - 2]), &tile.rows);
  ir::is_const_int(ir::simplify(shared.region[srank - 1].extent), &tile.cols);
  tile.bytes = tile_buffer->dtype.bytes();
  const size_t rank = global.region.size();
  if (rank < 1 || rank > 5 || tile.rows > 256) return std::nullopt;
  std::vector<int64_t> extents;
  for (const auto& r : global.region) {
    int64_t e;
    if (!ir::is_const_int(ir::simplify(r.extent), &e)) return std::nullopt;
    extents.push_back(e);
  }
  if (extents.back() != tile.cols) return std::nullopt;
  int rows_dims = 0;
  for (size_t d = 0; d + 1 < rank; ++d) {
    if (extents[d] == 1) continue;
    if (extents[d] != tile.rows || ++rows_dims > 1) return std::nullopt;
  }
  if (rows_dims == 0 && tile.rows != 1) return std::nullopt;
  if (tensor->strides.size() != rank) return std::nullopt;
  // The tensor map takes the call's strides; here they must be known multiples of 16 bytes
  // (constants, or in the contiguous variant products of dims such as S * 256 bytes).
  for (size_t d = 0; d < rank; ++d) {
    const ir::Expr& stride = tensor->strides[d];
    if (d + 1 == rank) {
      if (!ir::is_one(ir::simplify(stride))) return std::nullopt;
      continue;
    }
    ir::Expr bytes = ir::make_Mul(stride, ir::make_int(tile.bytes, stride->dtype));
    if (!ir::is_zero(ir::simplify(ir::make_FloorMod(bytes, ir::make_int(16, stride->dtype))))) return std::nullopt;
  }
  // A box whose first column is not on a 16-byte boundary stops the kernel (an illegal
  // instruction on an H100, a 1-D box of floats from element 1): it must be provably on one.
  const ir::Expr first = ir::simplify(ir::substitute(global.region[rank - 1].min, lets));
  if (!ir::provably_multiple_of(first, 16 / std::gcd<int64_t>(tile.bytes, 16)))
    return std::nullopt;
  return tile;
}

bool whole_panel_columns(const ir::BufferRegion& r) {
  const size_t rank = r.region.size();
  const int64_t panel_bytes = panel_bytes_of(*r.buffer);
  if (r.buffer->scope != ir::MemoryScope::Shared || rank < 2 || panel_bytes == 0) return false;
  const int64_t width = panel_bytes / r.buffer->dtype.bytes();
  int64_t rows, min, extent, cols;
  for (size_t d = 0; d + 2 < rank; ++d)
    if (!ir::is_one(ir::simplify(r.region[d].extent))) return false;
  const ir::Range& row = r.region[rank - 2];
  const ir::Range& col = r.region[rank - 1];
  if (!(ir::is_zero(ir::simplify(row.min)) && ir::is_const_int(ir::simplify(row.extent), &rows) &&
        ir::is_const_int(ir::simplify(r.buffer->shape[rank - 2]), &extent) && rows == extent &&
        ir::is_const_int(ir::simplify(col.extent), &extent) &&
        ir::is_const_int(ir::simplify(r.buffer->shape[rank - 1]), &cols) && extent % width == 0))
    return false;
  if (ir::is_const_int(ir::simplify(col.min), &min)) return min % width == 0 && min + extent <= cols;
  // A column a loop picks (Q_shared[:, j * 64:(j + 1) * 64]): a panel's first, whichever it is.
  ir::Expr panel_start = ir::simplify(ir::make_FloorMod(col.min, ir::make_int(width, col.min->dtype)));
  return ir::is_zero(panel_start);
}

int64_t panel_width_that_fits(const ir::BufferNode& b) {
  size_t rank = b.shape.size();
  int64_t rows, cols;
  if (b.scope != ir::MemoryScope::Shared || rank < 2 || !ir::is_const_int(ir::simplify(b.shape[rank - 2]), &rows) ||
      !ir::is_const_int(ir::simplify(b.shape[rank - 1]), &cols))
    return 0;
  int64_t extent;
  for (size_t d = 0; d + 2 < rank; ++d)
    if (!ir::is_const_int(ir::simplify(b.shape[d]), &extent) || extent < 1) return 0;
  if (rows < 1 || cols < 1) return 0;  // an empty tile: nothing to store
  // One row: unswizzled 16-byte panels, end to end, of whole 128-byte lines (what a TMA box
  // in shared memory starts on).
  if (rows == 1) return cols * b.dtype.bytes() % 128 == 0 ? 16 : 0;
  if (rows % 8 != 0) return 0;
  for (int64_t width : {128, 64, 32, 16})
    if (cols * b.dtype.bytes() % width == 0) return width;
  return 0;
}

int64_t panel_bytes_of(const ir::BufferNode& b) {
  const int64_t width = panel_width_that_fits(b);
  if (width && ir::has_user_layout(b) && ir::user_layout_differs(b, *ir::panels_of(b, width))) return 0;
  return width;
}

}  // namespace tilec::passes

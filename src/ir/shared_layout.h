// Shared-memory layouts: where each element of a shared tile lives.
//
// A SharedLayout is an IR expression over index variables, one per dim of a tile of constant
// shape: offset(i0, .., ik) is the element's offset from the buffer's start, in elements. The
// compiler's swizzles are such expressions, built from * + // % and ^:
//
//   row-major        offset = ((i0 * d1 + i1) * d2 + ..) + ik
//   mma swizzle      (r, c) of each rows x cols tile, E-byte elements (device/cuda/gemm.h,
//                    swizzled_offset): byte = r * cols * E + c * E, chunk = byte // 16,
//                    offset = ((chunk ^ key % 8) * 16 + byte % 16) // E, the key being r when
//                    rows are whole 128-byte lines, else chunk // 8 (the line)
//   P-byte panels    (r, c) of each rows x cols tile (device/cuda/panels.h, panel_offset):
//                    n = P // E columns a panel, byte = r * P + (c % n) * E,
//                    offset = (c // n) * rows * n + (byte ^ (byte // 128 % (P // 16)) * 16) // E
//   user             any expression of the indices (T.Layout(shape, lambda i, j: ...))
//
// Leading dims (pipeline stages) index whole tiles: offset = tile * rows * cols + offset(r, c).
// Swizzled layouts name their device helper too (device_offset), so CUDA code may call it;
// the mode (mma swizzle, panel width) is what wgmma descriptors and TMA maps need.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tilec::ir {

class SharedLayout;
using SharedLayoutRef = std::shared_ptr<const SharedLayout>;

class SharedLayout {
 public:
  enum class Kind { RowMajor, MmaSwizzle, Panels, User };

  // Each throws std::invalid_argument naming what the shape or widths lack.
  static SharedLayoutRef row_major(std::vector<int64_t> shape);
  // A tile of at least 2 dims whose rows x cols part spans whole 128-byte lines.
  static SharedLayoutRef mma_swizzle(std::vector<int64_t> shape, int64_t elem_bytes);
  // panel_bytes 128, 64, 32 or 16; rows a multiple of 8 and rows of whole panels.
  static SharedLayoutRef panels(std::vector<int64_t> shape, int64_t elem_bytes, int64_t panel_bytes);
  // `offset` an integer expression of `vars` (one int32 Var per dim) and constants.
  static SharedLayoutRef user(std::vector<int64_t> shape, std::vector<Expr> vars, Expr offset);

  Kind kind() const { return kind_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t elements() const;
  // The panels' width in bytes (Panels), else 0.
  int64_t panel_bytes() const { return panel_bytes_; }
  // Whether the layout permutes 16-byte chunks (mma swizzle, panels wider than 16 bytes): such
  // tiles start on 1024 bytes (whole periods of the pattern) and take whole 128-byte lines.
  bool swizzled() const;

  const std::vector<Expr>& vars() const { return vars_; }
  const Expr& offset() const { return offset_; }
  // The offset of element `indices` (one per dim), simplified.
  Expr offset_of(const std::vector<Expr>& indices) const;
  // The device helper that computes the offset of (r, c) within one tile, with its template
  // arguments ("swizzled_offset<32, 4>", "panel_offset<64, 64, 2, 128>"); empty for row-major
  // and user layouts.
  std::string device_offset() const;

  // Whether every element of the tile has its own offset in [0, elements()): empty when so,
  // else what is wrong (the first offset out of range or hit twice, with its indices).
  std::string bijection_error() const;
  // Whether both give every element the same offset.
  bool same_offsets(const SharedLayout& other) const;

  // The extra shared-memory wavefronts (0: conflict-free) of one warp's access: thread t reads
  // `bytes` (1 to 16) contiguous bytes from element `first[t]` on. A request is served
  // 128 bytes at a time (8 threads of 16 bytes, 16 of 8, 32 of 4 or fewer); in each such phase
  // a bank (4-byte word address mod 32) that holds k distinct words costs k wavefronts.
  int64_t bank_conflicts(const std::vector<std::vector<int64_t>>& first, int64_t bytes,
                         int64_t elem_bytes) const;

  // For dumps: "swizzled", "128-byte panels", "row-major", "layout (i, j) -> <offset>".
  std::string to_string() const;

  SharedLayout(Kind kind, std::vector<int64_t> shape, std::vector<Expr> vars, Expr offset, int64_t elem_bytes,
               int64_t panel_bytes);

 private:
  // The offset of every element, row-major over the tile's indices.
  std::vector<int64_t> all_offsets() const;

  Kind kind_;
  std::vector<int64_t> shape_;
  std::vector<Expr> vars_;
  Expr offset_;
  int64_t elem_bytes_;  // mma swizzle and panels; 0 for the others
  int64_t panel_bytes_;
};

}  // namespace tilec::ir

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
//   coordinates      a list of expressions of the indices (T.Layout(shape, lambda i, j: [c0, c1, ..])):
//                    each coordinate takes the values 0 .. e_k - 1 over the tile, and
//                    offset = row-major of (c0, c1, ..) over (e0, e1, ..); a User layout too
//
// Global tensors take user layouts as well (T.annotate_layout on a kernel's tensor parameter):
// then the tile is the whole tensor, and only the coordinate form's group-by-group bijection
// check (from_coordinates) is cheap enough for tensors of millions of elements.
//
// Leading dims (pipeline stages) index whole tiles: offset = tile * rows * cols + offset(r, c).
// Swizzled layouts name their device helper too (device_offset), so CUDA code may call it;
// the mode (mma swizzle, panel width) is what wgmma descriptors and TMA maps need.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
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
  // `offset` an integer expression of `vars` (one int32 Var per dim) and constants; `loc` is
  // where the user wrote it (for messages).
  // The vars are int32 or, for tiles of 2^31 elements or more, int64; the offset has their type.
  static SharedLayoutRef user(std::vector<int64_t> shape, std::vector<Expr> vars, Expr offset, SourceLoc loc = {});
  // `coordinates` integer expressions of `vars`: the layout that puts element (i0, .., ik) at
  // the row-major offset of its coordinates over their extents (each coordinate's largest
  // value over the tile, plus 1). Checked to be a bijection here, group by group: coordinates
  // that share an index, with the indices they use, form a group, and the layout is a
  // bijection exactly when each group maps its indices' elements one to one onto its
  // coordinates' box; a group is enumerated, so one of more than kMaxGroupElements elements is
  // refused. std::invalid_argument says what is wrong.
  static SharedLayoutRef from_coordinates(std::vector<int64_t> shape, std::vector<Expr> vars,
                                          std::vector<Expr> coordinates, SourceLoc loc = {});
  // The most elements a bijection check enumerates (bijection_error, a group of from_coordinates).
  static constexpr int64_t kMaxGroupElements = int64_t{1} << 22;

  Kind kind() const { return kind_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t elements() const;
  // The panels' width in bytes (Panels), else 0.
  int64_t panel_bytes() const { return panel_bytes_; }
  // Whether the layout permutes 16-byte chunks (mma swizzle, panels wider than 16 bytes): such
  // tiles start on 1024 bytes (whole periods of the pattern) and take whole 128-byte lines.
  bool swizzled() const;

  const SourceLoc& loc() const { return loc_; }
  const std::vector<Expr>& vars() const { return vars_; }
  const Expr& offset() const { return offset_; }
  // The offset of element `indices` (one per dim), simplified.
  Expr offset_of(const std::vector<Expr>& indices) const;
  // The device helper that computes the offset of (r, c) within one tile, with its template
  // arguments ("swizzled_offset<32, 4>", "panel_offset<64, 64, 2, 128>"); empty for row-major
  // and user layouts.
  std::string device_offset() const;

  // The offset of every element, row-major over the tile's indices.
  std::vector<int64_t> all_offsets() const;

  // Whether every element of the tile has its own offset in [0, elements()): empty when so,
  // else what is wrong (the first offset out of range or hit twice, with its indices). A layout
  // from_coordinates made is one; another of more than kMaxGroupElements elements is not
  // enumerated, and the answer says so.
  std::string bijection_error() const;
  // Whether both give every element the same offset.
  bool same_offsets(const SharedLayout& other) const;
  // The longest run of elements along the last dim that lies at consecutive offsets wherever
  // it starts on a multiple of its length, and starts on such a multiple itself (a power of
  // two dividing the last extent): what a vector access of the tile may move at once.
  int64_t contiguous_elements() const;
  // This layout with a leading dim of `stages` before its dims, each stage a whole copy (the
  // stage buffers of a pipelined loop).
  SharedLayoutRef staged(int64_t stages) const;
  // This layout as a user's (it binds: ops take it or run another way), `origin` saying why in
  // messages (user_layout_origin).
  SharedLayoutRef bound(std::string origin) const;
  // The same offsets for the elements read in row-major order as a tile of `shape` (a view of
  // the buffer, T.reshape), as a user's layout of the same origin.
  SharedLayoutRef viewed(std::vector<int64_t> shape) const;
  const std::string& origin() const { return origin_; }

  // The extra shared-memory wavefronts (0: conflict-free) of one warp's access: thread t reads
  // `bytes` (1 to 16) contiguous bytes from element `first[t]` on. A request is served
  // 128 bytes at a time (8 threads of 16 bytes, 16 of 8, 32 of 4 or fewer); in each such phase
  // a bank (4-byte word address mod 32) that holds k distinct words costs k wavefronts.
  int64_t bank_conflicts(const std::vector<std::vector<int64_t>>& first, int64_t bytes,
                         int64_t elem_bytes) const;

  // For dumps: "swizzled", "128-byte panels", "row-major", "layout (i, j) -> <offset>".
  std::string to_string() const;

  SharedLayout(Kind kind, std::vector<int64_t> shape, std::vector<Expr> vars, Expr offset, int64_t elem_bytes,
               int64_t panel_bytes, SourceLoc loc = {});

 private:
  // The offset of constant `index`; std::invalid_argument where it isn't a constant.
  int64_t offset_at(const std::vector<int64_t>& index) const;
  // The longest power-of-two run, `run` at most, that `offsets` keep whole (contiguous_elements).
  static int64_t longest_run(const std::vector<int64_t>& offsets, int64_t run);

  Kind kind_;
  std::vector<int64_t> shape_;
  std::vector<Expr> vars_;
  Expr offset_;
  int64_t elem_bytes_;  // mma swizzle and panels; 0 for the others
  int64_t panel_bytes_;
  SourceLoc loc_;
  std::string origin_;  // bound(): why the layout binds; empty for T.annotate_layout's
  bool checked_bijective_ = false;  // from_coordinates checked it
  mutable std::once_flag contiguous_once_;  // user layouts: evaluated once
  mutable int64_t contiguous_ = 1;
};

// The layouts of buffer b (shared, of constant shape) that the device helpers compute; they
// throw std::logic_error where b's shape is not constant or the constructor refuses it.
SharedLayoutRef mma_swizzle_of(const BufferNode& b);
SharedLayoutRef panels_of(const BufferNode& b, int64_t panel_bytes);

// The panel width of b's layout (SharedLayout::panel_bytes); 0 without one.
int64_t panel_width(const BufferNode& b);
// Whether b is in the mma.sync swizzle.
bool mma_swizzled(const BufferNode& b);
// Whether b has a user's layout (T.annotate_layout with T.Layout): it binds. An op that needs
// another layout (wgmma and TMA panels, the mma swizzle of gemm_ss and ldmatrix) takes it only
// when it gives every element the same offset, and else runs another way. The compiler's
// layouts, make_swizzled_layout's among them, yield to the one an op needs.
bool has_user_layout(const BufferNode& b);
// Whether b has a user's layout that puts some element elsewhere than `wanted` does.
bool user_layout_differs(const BufferNode& b, const SharedLayout& wanted);
// "the layout T.annotate_layout gave it at file:line" (b has a user layout), for messages.
std::string user_layout_origin(const BufferNode& b);

// The bytes shared buffer `b` takes (its elements, rounded up to 16 bytes, to 128 in the mma
// swizzle or panels), or -1 when its shape isn't constant: what plan_shared_memory places and
// the code generator counts.
int64_t shared_footprint(const BufferNode& b);
// Where it may start: a multiple of 1024 bytes in the mma swizzle or panels (whole periods of
// the pattern), else 128.
int64_t shared_alignment(const BufferNode& b);
// x rounded up to a multiple of `to`.
int64_t round_up(int64_t x, int64_t to);

}  // namespace tilec::ir

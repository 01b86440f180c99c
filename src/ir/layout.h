// Fragments: how the elements of a register tile are spread over a block's threads.
//
// A Fragment writes each index of a tile in mixed radix: index d is the sum of its digits,
// digit k being (index_d / place_k) % radix_k. Every digit lives either on the thread (the
// thread id's digit (tid / stride) % radix) or in the thread's registers (the slot's digit
// (slot / stride) % radix). Thread digits of no index (dim -1) are replicas: threads that
// differ only in them hold the same elements. Threads past threads() repeat the first ones.
//
//   mma accumulator of a 16 x 8 tile (frag_m16n8_c of device/cuda/mma.h):
//     row = g + 8 * h,  col = c + 2 * t   with lane = 4 * g + t, slot = c + 2 * h
//     digits: g (row, radix 8, place 1, thread stride 4), h (row, 2, 8, slot stride 2),
//             c (col, 2, 1, slot stride 1), t (col, 4, 2, thread stride 1)
//
// A fragment may cover more than its shape (radices rounded up): lowering then guards each
// element with `index < extent`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tilec::ir {

struct FragmentDigit {
  int dim = -1;          // the index this digit is part of; -1 for a replica digit
  int64_t radix = 1;
  int64_t place = 1;     // index units of one step of this digit
  bool on_thread = false;
  int64_t stride = 1;    // thread id or slot units of one step
};

class Fragment {
 public:
  Fragment() = default;
  Fragment(std::vector<int64_t> shape, std::vector<FragmentDigit> digits);

  const std::vector<int64_t>& shape() const { return shape_; }
  const std::vector<FragmentDigit>& digits() const { return digits_; }

  // Threads that hold distinct parts (replicas included); registers each holds.
  int64_t threads() const;
  int64_t slots() const;
  // Whether some index can exceed its extent (lowering adds guards).
  bool covers_more() const;
  // Whether every thread holds every element.
  bool replicated() const;

  // The tile indices of `slot` on thread `tid` (both int32 Exprs), one per dim.
  std::vector<Expr> indices(const Expr& tid, const Expr& slot) const;
  // The digit's value on thread `tid` or in `slot`.
  Expr digit_value(const FragmentDigit& digit, const Expr& tid, const Expr& slot) const;
  // The slot holding element `indices` (on the threads that hold it).
  Expr slot_of(const std::vector<Expr>& indices) const;

  // The slot in project(keep) of the element held in `slot`.
  Expr projected_slot(const std::vector<int>& keep, const Expr& slot) const;

  // Dims listed in `keep` (in that order) with the rest dropped: their slot digits go,
  // their thread digits become replicas. The layout a reduction's result takes.
  Fragment project(const std::vector<int>& keep) const;

  // project(keep) with its replicas along dim `reduced` (thread digits of powers of two within
  // `warp` threads) holding distinct elements: the lowest slot bits of project(keep), one
  // each, moved to those threads' bits (the lowest slot bit to the lowest thread bit). The
  // result of a reduction that leaves each partial sum on one thread of those that made it
  // (a reduce-scatter), so that what follows runs once an element, not on every replica.
  // Null where dim `reduced` has other thread digits or the projection fewer slot bits.
  std::optional<Fragment> scattered(const std::vector<int>& keep, int reduced, int64_t warp) const;
  // The thread strides of dim `dim`'s thread digits, a bit at a time, lowest first (a digit of
  // radix 4 at stride 1 is bits 1 and 2); null where one's radix is not a power of two or it
  // reaches past `warp` threads. The lane bits scattered() hands slot bits to, in that order.
  std::optional<std::vector<int64_t>> thread_bits(int dim, int64_t warp) const;

  // The same elements in the same slots of the same threads, indexed in `shape` as row-major
  // order reads them (a view, T.reshape). Each digit's part of the flat index, split where it
  // straddles a boundary of the new dims. Null where a split isn't whole digits (a digit of
  // radix 4 straddling a dim of extent 2 is, of extent 3 isn't), or the layout covers more
  // than its shape.
  std::optional<Fragment> reshaped(const std::vector<int64_t>& shape) const;

  // Whether both put every element in the same slots of the same threads: equal, or both
  // replicated with the same slots (however many replica digits either writes).
  bool same_placement(const Fragment& other) const;

  bool operator==(const Fragment& other) const;
  bool operator!=(const Fragment& other) const { return !(*this == other); }
  // "[shape] thread: ..., slot: ..." for dumps and error messages.
  std::string to_string() const;

 private:
  std::vector<int64_t> shape_;
  std::vector<FragmentDigit> digits_;
};

// The accumulator of gemm_ss (device/cuda/gemm.h) for an M x N tile over a
// warps_m x warps_n grid of warps.
Fragment mma_accumulator(int64_t m, int64_t n, int64_t warps_m, int64_t warps_n);

// The accumulator of wgmma_gemm_ss (device/cuda/wgmma.h) for an M x N tile over a
// groups_m x groups_n grid of warpgroups: m64 strips, 8-column groups, frag_m16n8_c slots.
Fragment wgmma_accumulator(int64_t m, int64_t n, int64_t groups_m, int64_t groups_n);

// The accumulator of mfma_gemm_ss (device/hip/mfma.h) for an M x N tile over a
// waves_m x waves_n grid of 64-lane waves: 16 x 16 tiles of v_mfma_f32_16x16x* (run with the
// operands swapped, so transposed), lane l holding row l % 16 and columns 4 * (l / 16) + r
// (r < 4, consecutive slots). Over waves_m x 1 waves it is also the register A of
// mfma_gemm_rs. docs/hip_backend.md.
Fragment mfma_accumulator(int64_t m, int64_t n, int64_t waves_m, int64_t waves_n);

// The layout of a tile nobody constrains: thread-major and contiguous in the last dim,
// `vector` elements a thread at a time (a divisor of the last extent), over `threads`.
Fragment default_fragment(const std::vector<int64_t>& shape, int64_t threads, int64_t vector);

// Every thread holds every element, in row-major slots.
Fragment replicated_fragment(const std::vector<int64_t>& shape);

// The layout of a reduction's result of `shape`: from.project(keep), read in `shape` where that
// keeps extent-1 dims (a (1,) result of a 1-D source, (M, 1) of (M, N) reduced along dim 1),
// so that each element stays in its slot on its threads. Null where `shape` holds another
// number of elements or the projection can't be read in it.
std::optional<Fragment> reduced_fragment(const Fragment& from, const std::vector<int>& keep,
                                         const std::vector<int64_t>& shape);

// `base` (over some dims of a loop) extended to a loop of `extents`: base's dim i is loop
// dim `dims[i]`; the other loop dims become slot digits (each thread walks all of them).
Fragment extend_fragment(const Fragment& base, const std::vector<int>& dims,
                         const std::vector<int64_t>& extents);

}  // namespace tilec::ir

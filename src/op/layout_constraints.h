// What layout inference (passes/gpu/infer_layout.h) works with to give fragments their
// layouts: sites, the statements whose elements a GPU target spreads over its threads as one
// loop nest (a T.Parallel nest, or a tile op seen as one), and the fragments each site
// touches at which of its dims; and how a site's layout and its fragments' layouts follow
// from one another.
//
// Each tile op's unit states its constraints (`layout_constraints(const ir::<Op>&)`, op/op.h
// dispatches over the kinds), and so does a T.Parallel nest (op/parallel.h); inference asks
// them, so a new op's fragments get layouts that fit it without the pass changing.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/diagnostics.h"
#include "ir/ir.h"
#include "ir/layout.h"

namespace tilec::op {

inline bool is_fragment(const ir::Buffer& b) { return b && b->scope == ir::MemoryScope::Fragment; }

// The run of consecutive elements a thread takes at a time in the default layout of `shape`
// over `threads`, so that its accesses of `bytes`-byte elements can be single vector ones
// (nest_vectors.h): at most 16 bytes, a divisor of the last extent, and no longer than keeps
// every thread busy.
int64_t default_run(const std::vector<int64_t>& shape, int64_t threads, int64_t bytes);

// A fragment's shape; an error at its allocation when a dim is not constant.
std::vector<int64_t> const_shape(const ir::Buffer& b);

// One fragment access of a site: buffer dim d is site dim dims[d], or -1 when its index
// is not one of the site's loop indices; read_only when it is a load of a T.Parallel nest.
struct FragmentAccess {
  ir::Buffer buffer;
  std::vector<int> dims;
  bool read_only = false;
};

// A statement whose elements are spread over threads as one loop nest: a T.Parallel nest
// or a tile op seen as one.
struct Site {
  std::vector<int64_t> extents;
  std::vector<FragmentAccess> accesses;
  SourceLoc loc;
  // Seeded before the other sites that hold fragments along a dim they don't spread: a
  // gemm's on CUDA cores, whose operands' rows follow from its accumulator's layout, so that
  // a fragment copied into its operand (a dequantized tile) is laid out for the gemm, not
  // the gemm's operand for the loop that made the tile.
  bool seeded_first = false;
};

// A fragment whose layout follows from another's: `to` takes `from`'s layout on its dims
// `keep` (a reduction's result: its source's layout without the reduced dim), or a replicated
// one when that has another shape (a result that keeps extent-1 dims). `to` must be a
// fragment when `from` is: `what` names the op for that error ("a reduction").
struct Projection {
  ir::Buffer from, to;
  std::vector<int> keep;
  SourceLoc loc;
  std::string what;
};

// What a statement needs of the layouts of the fragments it touches: the sites it runs as,
// the layouts that follow from others, and the fragments every thread must hold whole.
struct LayoutConstraints {
  std::vector<Site> sites;
  std::vector<Projection> projections;
  std::vector<std::pair<ir::Buffer, SourceLoc>> replicated;
};

// The fragments among `buffers`, each held whole by every thread.
LayoutConstraints replicated(const std::vector<ir::Buffer>& buffers, const SourceLoc& loc);

// An op that runs as one site over the tile of `domain`, every operand at the tile's dims
// (a copy, a fill, a tile atomic add): nothing when no operand is a fragment, a replicated
// layout for its fragments when the tile's extents are not constant.
LayoutConstraints tile_constraints(const ir::BufferRegion& domain, const std::vector<ir::BufferRegion>& operands,
                                   const SourceLoc& loc);

// The site dims of a tile op operand: squeezed dim k of the region is site dim k when
// the operand covers its whole buffer dim from 0 (else unmapped).
FragmentAccess tile_access(const ir::BufferRegion& r, const std::vector<int>& site_dims);

// The extents as constants, or nothing (empty) when one is not constant.
std::vector<int64_t> const_extents(const std::vector<ir::Expr>& extents);

// 0, 1, ..., n - 1.
std::vector<int> iota(size_t n);

// Whether `frag` (of an access with `dims`) holds on each thread what `loop` gives it:
// every thread digit of a mapped dim is a thread digit of the loop, and unmapped dims
// have no thread digits.
bool owned_under(const ir::Fragment& frag, const std::vector<int>& dims, const ir::Fragment& loop);

// The layout of a site from one fragment access with a layout, or nothing.
std::optional<ir::Fragment> layout_from(const FragmentAccess& a, const ir::Fragment& frag,
                                        const std::vector<int64_t>& extents);

// The layout of fragment access `a` at a site that runs by `layout`: the site's layout on the
// dims the access maps; each thread holds the whole of the other dims. Nothing when the
// fragment's extents there differ from the site's.
std::optional<ir::Fragment> access_layout(const ir::Fragment& layout, const FragmentAccess& a,
                                          const std::vector<int64_t>& extents);

// The layout a site runs by, from the layouts `layout_of` gives its fragments: that of an
// access that maps every site dim, else of one that maps some; nothing when none has one.
// A load that maps some dims of a fragment every thread holds whole fits any layout, and
// gives none: extended over the other dims, it would run the whole site on every thread.
std::optional<ir::Fragment> site_layout(const Site& site,
                                        const std::function<const ir::Fragment*(const ir::Buffer&)>& layout_of);

}  // namespace tilec::op

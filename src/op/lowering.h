// What an op's generic lowering (`lower` in op/<op>.cc) works with: lower_tile_ops' mutator,
// whose bound analysis and operand index helpers (passes/tile_lowering.h) tell where bounds
// checks are needed, and how the loops over an op's elements are made: serial loops with the
// innermost vectorized (the CPU), or T.Parallel loops a GPU target spreads over its threads.
#pragma once

#include "passes/tile_lowering.h"

namespace tilec::op {

class Lowering : public passes::TileLowering {
 public:
  using Access = passes::Access;

  using TileLowering::access;
  using TileLowering::access_2d;
  using TileLowering::access_tile;
  using TileLowering::bind_range;
  using TileLowering::bounds_;
  using TileLowering::combine;
  using TileLowering::conjoin;
  using TileLowering::guarded_load;
  using TileLowering::identity_of;
  using TileLowering::in_range;
  using TileLowering::located;
  using TileLowering::loop_vars;
  using TileLowering::zero_of;

  // Whether the loops over an op's elements are T.Parallel loops (a GPU target's threads).
  bool threaded() const { return threaded_; }

  // Innermost loops of tile ops are independent, so they are marked for
  // vectorization, unless bounds checks guard their accesses: GCC 12 at -O3
  // -march=native was seen to miscompile forced-vectorized loops holding a
  // guarded store, and the guards block vectorization's gains anyway.
  template <typename... Accesses>
  static ir::ForKind innermost_kind(const Accesses&... accesses) {
    bool guarded = (... || accesses.in_bounds.defined());
    return guarded ? ir::ForKind::Serial : ir::ForKind::Vectorized;
  }

  // Loops over an op's elements: vars[i] over [0, extents[i]).
  Stmt nest(const std::vector<Expr>& vars, const std::vector<Expr>& extents, Stmt body,
            ir::ForKind innermost = ir::ForKind::Vectorized) const;

 protected:
  explicit Lowering(bool threaded) : threaded_(threaded) {}

 private:
  const bool threaded_;
};

}  // namespace tilec::op

// What the two ways of pipelining a T.Pipelined loop share (pipeline_loops: cp.async stages;
// warp_specialize: TMA stages on mbarriers): which statements are its producers, and the
// accesses of staged buffers as accesses of one stage.
#pragma once

#include <unordered_map>
#include <vector>

#include "ir/mutator.h"
#include "ir/substitute.h"
#include "op/accesses.h"

namespace tilec::passes {

// How many statements touch each buffer (tile-op regions, loads and stores; a view's
// Allocate touches the view and its buffer).
std::unordered_map<const ir::BufferNode*, int> count_uses(const ir::Stmt& s);

// The thread's own scalars and local arrays (local scope) that `loop_body` does not write: each
// holds one value through the loop, so an expression of a later iteration may read it now.
op::BufferSet loop_invariant_locals(const ir::Stmt& loop_body);

// Whether `e` reads an on-chip buffer (shared, fragment or local), whose contents depend on
// what the block's threads did before, other than those in `invariant`.
bool reads_on_chip(const ir::Expr& e, const op::BufferSet& invariant = {});

// Whether `e` is arithmetic on variables and constants alone: no buffer access and no call,
// so it may be evaluated again, or earlier, with the same result.
bool is_pure_arithmetic(const ir::Expr& e);

// The statements of a pipelined loop's body. Leading lets of pure arithmetic (a tile's offset,
// `keys = k * block_N`) are substituted into what follows, so that the copies they index are
// statements of the list and can be staged.
std::vector<ir::Stmt> loop_body_statements(const ir::Stmt& body);

// Whether `s` is a copy from global to shared memory whose regions read no on-chip buffer
// other than those in `invariant` (so it can run ahead of the rest of the loop body).
bool is_producer(const ir::Stmt& s, const op::BufferSet& invariant = {});

// Accesses of the staged buffers (original -> its version with a leading stage dim) as
// accesses of stage `stage`.
class StageAccesses : public ir::IRMutator {
 public:
  StageAccesses(const ir::BufferMap& staged, ir::Expr stage) : staged_(staged), stage_(std::move(stage)) {}

 protected:
  ir::BufferRegion mutate_region(const ir::BufferRegion& region) override;
  ir::Expr mutate_BufferLoad(const ir::BufferLoad* op, const ir::Expr& self) override;
  ir::Stmt mutate_BufferStore(const ir::BufferStore* op, const ir::Stmt& self) override;

 private:
  const ir::BufferMap& staged_;
  ir::Expr stage_;
};

}  // namespace tilec::passes

// Which memory accesses of a T.Parallel nest move several elements at once.
//
// A nest's layout gives each thread runs of consecutive elements along the nest's last dim
// when its lowest slot digit is there (place 1, slot stride 1: the default layout's vector,
// or an mma accumulator's column pair). An access of global or shared memory whose last index
// is that loop var plus an offset, and whose other indices don't use it, then reads or writes
// such a run as one access of up to 16 bytes -- when the run starts aligned: the offset and
// the buffer's row strides are multiples of the width, and the data is aligned (shared memory
// always; global memory in the contiguous-arguments variant). The other indices may read
// shared or global memory (a gather's row); a load the value reads only under a condition
// (T.if_then_else, a bounds guard) moves as a vector only when the condition holds or fails
// for the whole run, and is then made only when it holds (zeros otherwise). Where the value is
// `if_then_else(condition, load, 0)`, that whole expression is the vector's element.
#pragma once

#include <optional>
#include <vector>

#include "ir/layout.h"
#include "op/parallel.h"

namespace tilec::passes {

// A nest's body as nest_vectors takes it: one store, or one store under a condition without
// else that neither the nest's last var nor a load enters (a copy's bounds check of the other
// dims, as T.copy into a tile that may pass the tensor's end writes). The condition then holds
// or fails for a whole run, and is tested once for it.
struct NestStore {
  const ir::BufferStore* store = nullptr;
  ir::Expr guard;  // null when the store is unconditional
};

std::optional<NestStore> nest_store(const op::ParallelNest& nest);

struct NestVectors {
  int64_t width = 1;                          // elements a vector access moves
  struct Load {
    const ir::BufferLoad* load;               // in the nest's store value
    ir::Expr guard;                           // the condition it is read under (null: none), the same along a run
    const ir::ExprNode* zero_else = nullptr;  // a Select in the value equal to the load, or zero where guard fails
  };
  std::vector<Load> loads;                    // the loads that vectorize
  bool store = false;                         // whether the nest's store does
};

// The vector accesses of `nest` (whose body must be a nest_store) run by `layout`, or nothing
// when there are none. `aligned_globals`: tensors' data is 16-byte aligned.
std::optional<NestVectors> nest_vectors(const op::ParallelNest& nest, const ir::Fragment& layout, bool aligned_globals);

}  // namespace tilec::passes

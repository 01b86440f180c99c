// The shared buffers a statement reads and writes (ir/buffer_accesses.h). Used to place
// barriers and to find the lifetimes of shared buffers.
#pragma once

#include "ir/buffer_accesses.h"

namespace tilec::passes {

using ir::BufferSet;

class SharedAccesses : public ir::BufferAccesses {
 public:
  SharedAccesses() : BufferAccesses(ir::MemoryScope::Shared) {}
};

}  // namespace tilec::passes

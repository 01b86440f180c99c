// Element accesses of global tensors that may fall outside them are made safe, as TileLang's
// programs expect (its LegalizeSafeMemoryAccess, on unless "tl.disable_safe_memory_legalize"):
// a load whose index can't be proven in bounds reads 0 there instead, and a store is skipped. DSA's sparse MLA kernels gather rows by top-k indices padded with
// the tensor's length and mask them afterwards; unguarded, those loads read past the tensor.
//
// An index is in bounds when the interval analysis of the loop, block and thread variables
// proves 0 <= index < dim, or an enclosing `if` states index < dim. Tile ops (T.copy,
// T.atomic_add, ...) bound their own accesses and are left alone. Off with the pass config
// "tilec.safe_global_access" = False, and under "tilec.bounds_check", which reports such an
// access instead.
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt guard_global_accesses(const ir::Stmt& body, const PassContext& ctx);

}  // namespace tilec::passes

// The kernel specialized for the common call: every tensor argument contiguous
// (row-major, compact) with its data 16-byte aligned.
//
// Each tensor parameter's stride Vars become the products of its trailing dims
// (constants when the shape is), so the generated code indexes with known
// strides and the strides drop out of the ABI. Alignment is recorded in
// PassContext::aligned_tensor_data for the lowering to rely on. The runtime
// launches this variant only for calls that satisfy both assumptions and builds
// the general one for any other (runtime/kernel.cc).
#pragma once

#include "ir/ir.h"

namespace tilec::passes {

ir::PrimFunc specialize_contiguous(const ir::PrimFunc& func);

}  // namespace tilec::passes

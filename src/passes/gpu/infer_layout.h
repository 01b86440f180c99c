// Layouts for a kernel's on-chip buffers, before lowering to threads.
//
// Every fragment gets a Fragment (ir/layout.h), set on its Buffer:
//   1. the operands of a T.gemm select_instructions put on the target's matrix cores take
//      the layouts its instruction demands, as the target's hook says (passes/gpu/
//      gemm_layouts.h): the accumulator's over the instruction's grid, an operand in
//      registers as the instruction reads it;
//   2. fragments read or written outside T.Parallel loops and tile ops are replicated
//      (every thread holds every element, so scalar code can use them);
//   3. until nothing changes: the layout constraints of every other tile op (its unit's,
//      op/op.h) and of every T.Parallel nest (op/parallel.h) pass layouts on: a reduction's
//      result takes its source's layout without the reduced dim; a site (a nest, or an op
//      seen as one) runs by the layout of a fragment it touches, and the other fragments it
//      touches take that layout; a view (T.reshape) and the fragment it views read the same
//      registers, each in its own shape (Fragment::reshaped);
//   4. a fragment still without one takes the default (thread-major) layout (a constrained
//      site's first: see seed_of_constrained_site and seed_line_site), and step 3 runs again.
// Two demands on one fragment that disagree are a compile error naming both places.
//
// Shared tiles take the layouts such a gemm's hook demands (mma.sync's swizzle, MFMA's
// row-major), then those in panels on their instructions (a gemm's a_panel_bytes and
// b_panel_bytes, a TMA copy's panel_bytes) take panels of that width.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/layout.h"
#include "passes/gpu/gemm_layouts.h"
#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt infer_layout(const ir::Stmt& body, const PassContext& ctx);
// With the gemm layouts of `gemm_layouts` rather than ctx.target's hook (what the pass above
// takes); null for a target without matrix cores. A gemm on the matrix cores that the hook
// has no layouts for is an internal error.
ir::Stmt infer_layout(const ir::Stmt& body, const PassContext& ctx, GemmLayoutHook gemm_layouts);

}  // namespace tilec::passes

// Layouts for a kernel's on-chip buffers, before lowering to threads.
//
// Every fragment gets a Fragment (ir/layout.h), set on its Buffer:
//   1. T.gemm accumulators on the mma.sync path take the accumulator of gemm_ss over a warp
//      grid chosen for the tile (device/cuda/gemm.h); an operand in registers (gemm_rs,
//      gemm_sr) takes register_operand_layout;
//   2. fragments read or written outside T.Parallel loops and tile ops are replicated
//      (every thread holds every element, so scalar code can use them);
//   3. until nothing changes: the layout constraints of every other tile op (its unit's,
//      op/op.h) and of every T.Parallel nest (op/parallel.h) pass layouts on: a reduction's
//      result takes its source's layout without the reduced dim; a site (a nest, or an op
//      seen as one) runs by the layout of a fragment it touches, and the other fragments it
//      touches take that layout;
//   4. a fragment still without one takes the default (thread-major) layout (a constrained
//      site's first: see seed_of_constrained_site and seed_line_site), and step 3 runs again.
// Two demands on one fragment that disagree are a compile error naming both places.
//
// Shared tiles that T.gemm reads on the mma path are marked swizzled.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/layout.h"
#include "passes/cuda/select_instructions.h"
#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt infer_layout(const ir::Stmt& body, const PassContext& ctx);

// The layout of gemm `op`'s A (`a`) or B operand when it is a fragment (gemm_rs / gemm_sr).
ir::Fragment register_operand_layout(const ir::Gemm& op, const WarpGrid& grid, bool a);


}  // namespace tilec::passes

// Layouts for a kernel's on-chip buffers, before lowering to threads.
//
// Every fragment gets a Fragment (ir/layout.h), set on its Buffer:
//   1. T.gemm accumulators on tensor cores take the accumulator of the instruction
//      select_instructions chose over its grid (mma.sync: device/cuda/gemm.h, wgmma, MFMA);
//      an operand in registers takes register_operand_layout (mma.sync) or the wgmma
//      accumulator's layout (wgmma_gemm_rs);
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
// Shared tiles that T.gemm reads on the mma path are marked swizzled; those a wgmma gemm or a
// TMA store reads are marked as stored in panels of the width their instruction says.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/layout.h"
#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt infer_layout(const ir::Stmt& body, const PassContext& ctx);

// The layout of gemm `op`'s A (`a`) or B operand when it is a fragment on mma.sync (gemm_rs /
// gemm_sr), over the warps of its instruction.
ir::Fragment register_operand_layout(const ir::Gemm& op, bool a);


}  // namespace tilec::passes

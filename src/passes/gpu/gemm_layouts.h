// The seam between layout inference and a target's matrix-core gemms.
//
// infer_layout (passes/gpu/infer_layout.h) is target-neutral: a worklist over the layout
// constraints of ops and T.Parallel nests. What a gemm on a target's own instructions needs
// (its accumulator's layout, an operand in registers laid out as the instruction reads it, a
// shared operand in the layout the instruction loads) is the target's, said by its hook:
//
//   cuda   passes/cuda/gemm_layouts.h   mma.sync, wgmma
//   hip    passes/hip/gemm_layouts.h    MFMA
//
// A third target with matrix cores adds its hook file and a line in gemm_layout_hook.
#pragma once

#include <optional>
#include <vector>

#include "ir/ir.h"
#include "ir/layout.h"
#include "ir/shared_layout.h"
#include "target/target.h"

namespace tilec::passes {

// The layouts one gemm demands of its operands, taken before the worklist runs.
struct GemmLayoutDemands {
  struct OnFragment {
    ir::Buffer buffer;
    ir::Fragment layout;
  };
  struct InShared {
    ir::Buffer buffer;
    ir::SharedLayoutRef layout;  // null: compact row-major
  };
  std::vector<OnFragment> fragments;  // the accumulator, and an operand in registers
  std::vector<InShared> shared;       // shared operands the instruction reads in a layout of its own
};

// A target's hook: what gemm `op` demands on the instruction select_instructions chose for it
// (op.instruction, on the matrix cores), or nullopt when the target has no such instruction.
using GemmLayoutHook = std::optional<GemmLayoutDemands> (*)(const ir::Gemm& op);

// The hook of `target` (nullptr for a target without matrix cores). Defined in
// passes/pipeline.cc, beside each target's pass list.
GemmLayoutHook gemm_layout_hook(const Target& target);

}  // namespace tilec::passes

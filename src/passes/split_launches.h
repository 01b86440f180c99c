// A function with several `with T.Kernel(...)` blocks runs them one after another, as
// TileLang's split-K and flash-decoding kernels do (a split pass, then a combine pass over what
// it wrote to global memory). On a GPU each block is a launch of its own: split_launches gives
// one function per block, in order, each with all of the function's params and the lets and
// allocations around its block. The CPU backend runs the blocks of one function in order and
// needs no split.
#pragma once

#include <vector>

#include "ir/ir.h"

namespace tilec::passes {

// The T.Kernel blocks of `func`, each as a function of its own (a function of one block is
// returned whole). A CompileError at a statement outside every block (it would run on no GPU
// thread), or at the function when it has no block.
std::vector<ir::PrimFunc> split_launches(const ir::PrimFunc& func, const std::string& target_name);

}  // namespace tilec::passes

// The grid of one CUDA launch: the code generator's grid extents evaluated with the launch's
// integer arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel_abi.h"
#include "runtime/cuda/cuda_module.h"

namespace tilec::runtime {

// CUDA's largest grid, in blocks.
inline constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;
inline constexpr int64_t kMaxGridYZ = 65535;

// `extents` (x, y, z order; 1 to 3 integer Exprs over the Vars of abi.int_slots) with each
// slot's Var bound to `ints` (the launch's int words). nullopt when an extent is 0 or less:
// there is nothing to launch. Throws ArgumentError naming `kernel_name` when an extent passes
// CUDA's limits, std::logic_error when an extent uses a Var that no slot binds.
std::optional<LaunchDims> launch_grid(const std::vector<ir::Expr>& extents,
                                      const codegen::KernelAbi& abi,
                                      const std::vector<int64_t>& ints,
                                      const std::string& kernel_name);

}  // namespace tilec::runtime

#include "runtime/cuda/launch_grid.h"

#include <stdexcept>

#include "ir/printer.h"
#include "ir/simplify.h"
#include "ir/substitute.h"

namespace tilec::runtime {

std::optional<LaunchDims> launch_grid(const std::vector<ir::Expr>& extents,
                                      const codegen::KernelAbi& abi,
                                      const std::vector<int64_t>& ints,
                                      const std::string& kernel_name) {
  if (extents.empty() || extents.size() > 3)
    throw std::logic_error("kernel '" + kernel_name + "' has " + std::to_string(extents.size()) +
                           " grid extents; a CUDA grid has 1 to 3");
  static constexpr const char* kAxes[] = {"x", "y", "z"};
  ir::VarMap values;  // filled at the first extent that is not a constant
  int64_t blocks[3] = {1, 1, 1};
  for (size_t axis = 0; axis < extents.size(); ++axis) {
    const ir::Expr& extent = extents[axis];
    if (!ir::is_const_int(extent, &blocks[axis])) {
      if (values.empty())
        for (size_t i = 0; i < abi.int_slots.size(); ++i) {
          const ir::Expr& var = abi.int_slots[i].var;
          values[var.get()] = ir::make_int(ints[i], var->dtype);
        }
      if (!ir::is_const_int(ir::simplify(ir::substitute(extent, values)), &blocks[axis]))
        throw std::logic_error("kernel '" + kernel_name + "': grid extent " + kAxes[axis] + " (" +
                               ir::to_string(extent) + ") uses a value that is not an argument");
    }
    if (blocks[axis] <= 0) return std::nullopt;
  }
  for (size_t axis = 0; axis < extents.size(); ++axis) {
    const int64_t limit = axis == 0 ? kMaxGridX : kMaxGridYZ;
    if (blocks[axis] > limit)
      throw ArgumentError("kernel '" + kernel_name + "': grid extent " + kAxes[axis] + " (" +
                          ir::to_string(extents[axis]) + ") is " + std::to_string(blocks[axis]) +
                          " blocks for these arguments, over CUDA's limit of " +
                          std::to_string(limit));
  }
  return LaunchDims{static_cast<unsigned>(blocks[0]), static_cast<unsigned>(blocks[1]),
                    static_cast<unsigned>(blocks[2])};
}

}  // namespace tilec::runtime

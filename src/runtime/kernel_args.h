// A call's arguments checked against a kernel's params, before anything is touched: every
// mismatch is an ArgumentError naming the parameter (an ArgumentTypeError when an argument
// is of the wrong kind).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/kernel_impl.h"

namespace tilec::runtime {

// Checks the arguments of a launch: their count, each one's kind (tensor or scalar), each
// tensor's dtype, rank, shape (constant dims, symbolic dims that agree between tensors and
// fit their type, dims written as expressions), device and strides, that the tensors the
// kernel writes are writable, and each scalar's range.
void check_launch_args(const Kernel::Impl& k, const std::vector<ArgValue>& args);

// The shapes of the tensor params whose entry of `args` is null, solved from the tensors
// given (each checked as check_launch_args does).
std::vector<std::vector<int64_t>> solve_output_shapes(const Kernel::Impl& k,
                                                      const std::vector<std::optional<ArgValue>>& args);
// The same from the shapes of the tensors given alone (a tensor with no data: a torch fake
// kernel's); a scalar param's entry is ignored.
std::vector<std::vector<int64_t>> solve_output_shapes(const Kernel::Impl& k,
                                                      const std::vector<std::optional<std::vector<int64_t>>>& args);

}  // namespace tilec::runtime

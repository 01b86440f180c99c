// The words a compiled kernel reads its arguments from (codegen/kernel_abi.h), filled from a
// call's checked arguments; the same for every target, laid out for CUDA's one parameter too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/kernel_abi.h"
#include "tilec/tilec.h"

namespace tilec::runtime {

struct LaunchArgs {
  std::vector<void*> tensors;  // data pointers, in abi.tensor_params order
  std::vector<int64_t> ints;   // abi.int_slots
  std::vector<double> floats;  // abi.float_params
};

// The word a scalar argument passes in: an integer param's (a uint64_t's bits, a bool as 0
// or 1), a float param's.
int64_t int_word(const ArgValue& scalar);
double float_word(const ArgValue& scalar);

// `args` (one per param, already checked against the kernel's params) in `abi`'s order. A
// symbolic dim is read from the tensor dim its slot names (the first that is the dim alone:
// the arguments agree on it once checked), so `abi` may be any variant's. Throws
// ArgumentError naming `kernel_name` when a symbolic dim is no tensor dim by itself.
LaunchArgs pack_launch_args(const codegen::KernelAbi& abi, const std::vector<ArgValue>& args,
                            const std::string& kernel_name);

// The one parameter of a CUDA kernel (codegen/cuda/codegen_cuda.h): the 8-byte words
// tensors[max(1, T)], ints[max(1, I)], floats[max(1, F)] (a float as its bits; an empty
// array is one word of 0).
std::vector<uint64_t> cuda_param_words(const LaunchArgs& args);

}  // namespace tilec::runtime

// The CPU target: lowered IR as one C++17 translation unit with OpenMP.
//
// The unit defines the entry of codegen/kernel_abi.h (`kernel_entry_name()`),
// includes "cpu/tilec_cpu.h" from device/ and is built by the host compiler
// with -fopenmp. Each KernelLaunch becomes a collapsed `omp parallel for` over
// its grid with the block body inside, so shared and fragment buffers are
// block-local (per-thread) storage; `threads` and barriers have no meaning here.
#pragma once

#include <string>

#include "codegen/kernel_abi.h"
#include "ir/ir.h"

namespace tilec::codegen {

// The C++ source of `func`, reading its arguments as `abi` lays them out.
// Throws std::logic_error when a tile operation (Copy, Gemm, ...) is left.
std::string generate_cpu_source(const ir::PrimFunc& func, const KernelAbi& abi);

}  // namespace tilec::codegen

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
#include "target/target.h"

namespace tilec::codegen {

// The C++ source of `func` for `target` (the cpu one, named in its header), reading its
// arguments as `abi` lays them out.
// Throws std::logic_error when a tile operation (Copy, Gemm, ...) is left.
//
// With `bounds_check`, every buffer access checks its indices; the first access
// out of bounds is recorded (and reads a scratch element, so memory stays
// intact) and the unit exports `extern "C" const char* <kernel_error_name()>(int* argument)`
// returning its description (tensor, index, shape, kernel source line) once, and setting
// *argument where it is the arguments' fault (raised as a ValueError, as on a GPU).
std::string generate_cpu_source(const ir::PrimFunc& func, const KernelAbi& abi, const Target& target,
                                bool bounds_check = false);

inline const char* kernel_error_name() { return "tilec_kernel_error"; }

}  // namespace tilec::codegen

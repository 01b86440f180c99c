// The host side of device/cuda/bounds_check.h: how a bounds-checked kernel's failure reaches the
// caller. A failed check traps, and after a trap the CUDA context is unusable for the rest of the
// process: no device memory can be read, and every later CUDA call in the process fails. So the
// kernel writes its description into host memory mapped into the device, and the runtime waits for
// each checked launch and turns its failure into an error that says what was out of bounds.
#pragma once

#include <string>

#include "runtime/cuda/cuda_driver.h"

namespace tilec::runtime {

// device/cuda/bounds_check.h's tilec_cuda::bounds_report, as the host sees it.
struct BoundsReport {
  volatile int state;  // 0, then 1 once `text` is whole
  volatile char text[508];
};

// For a module of a bounds-checked kernel (one that defines tilec_bounds_report), just loaded in
// the current context: a report of its own in mapped host memory, its address stored in the
// module. Null for a module without checks. Throws std::runtime_error naming `kernel_name`.
BoundsReport* attach_bounds_report(const CudaDriver& driver, CUmodule module,
                                   const std::string& kernel_name);

// Waits for the work on `stream` after a launch of a checked kernel whose module has `report`,
// and throws std::runtime_error when it failed: the kernel's description of the access out of
// bounds (recorded with the driver, so later CUDA errors say it), or what the driver says when
// no check failed. Under CUDA graph capture it returns at
// once: the failure then shows when the graph runs, as a CUDA error (the device still prints the
// access).
void wait_for_checked_launch(const CudaDriver& driver, const BoundsReport& report, CUstream stream,
                             const std::string& kernel_name);

}  // namespace tilec::runtime

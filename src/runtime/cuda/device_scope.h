// Runs a scope on one CUDA device: its primary context is made current on the calling thread,
// and the context that was current before is put back at the end, so the caller's (PyTorch's)
// current device is left as it was.
#pragma once

#include "runtime/cuda/cuda_driver.h"

namespace tilec::runtime {

class DeviceScope {
 public:
  // Does nothing when the current context is already on device `ordinal`.
  DeviceScope(const CudaDriver& driver, int ordinal);
  ~DeviceScope();

  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  const CudaDriver& driver_;
  CUcontext previous_ = nullptr;  // the context to restore; null: none (leave the new one)
};

}  // namespace tilec::runtime

#include "runtime/cuda/device_scope.h"

namespace tilec::runtime {

DeviceScope::DeviceScope(const CudaDriver& driver, int ordinal) : driver_(driver) {
  CUcontext current = nullptr;
  driver.check(driver.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current != nullptr) {
    CUdevice device = 0;
    driver.check(driver.cuCtxGetDevice(&device), "cuCtxGetDevice");
    if (device == ordinal) return;
  }
  driver.use_device(ordinal);
  previous_ = current;
}

DeviceScope::~DeviceScope() {
  if (previous_ != nullptr) driver_.cuCtxSetCurrent(previous_);
}

}  // namespace tilec::runtime

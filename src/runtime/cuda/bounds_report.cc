#include "runtime/cuda/bounds_report.h"

#include <stdexcept>

#include "base/log.h"

namespace tilec::runtime {

BoundsReport* attach_bounds_report(const CudaDriver& driver, CUmodule module,
                                   const std::string& kernel_name) {
  CUdeviceptr slot = 0;
  size_t slot_bytes = 0;
  const CUresult found =
      driver.cuModuleGetGlobal(&slot, &slot_bytes, module, "tilec_bounds_report");
  if (found == CUDA_ERROR_NOT_FOUND) return nullptr;
  driver.check(found, "finding the bounds report of kernel " + kernel_name);
  if (slot_bytes != sizeof(void*)) {
    throw std::logic_error("kernel " + kernel_name + ": its tilec_bounds_report is " +
                           std::to_string(slot_bytes) + " bytes, not a pointer");
  }
  // Portable and mapped: readable by the host whatever happens to the context. Kept for the
  // life of the process, as the module is.
  void* host = nullptr;
  driver.check(driver.cuMemHostAlloc(&host, sizeof(BoundsReport),
                                     CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP),
               "allocating the bounds report of kernel " + kernel_name);
  auto* report = static_cast<BoundsReport*>(host);
  report->state = 0;
  report->text[0] = '\0';
  CUdeviceptr device = 0;
  driver.check(driver.cuMemHostGetDevicePointer(&device, host, 0),
               "mapping the bounds report of kernel " + kernel_name);
  driver.check(driver.cuMemcpyHtoD(slot, &device, sizeof device),
               "setting the bounds report of kernel " + kernel_name);
  return report;
}

void wait_for_checked_launch(const CudaDriver& driver, const BoundsReport& report, CUstream stream,
                             const std::string& kernel_name) {
  int capture = CU_STREAM_CAPTURE_STATUS_NONE;
  const CUresult asked = driver.cuStreamIsCapturing(stream, &capture);
  if (asked == CUDA_SUCCESS && capture != CU_STREAM_CAPTURE_STATUS_NONE) {
    log(LogLevel::Debug, "kernel " + kernel_name +
                             ": launched into a CUDA graph, so its bounds checks are reported when "
                             "the graph runs, by the device's printf");
    return;
  }
  // A kernel that has trapped already may fail the question too: the report says why.
  CUresult result = driver.cuStreamSynchronize(stream);
  if (result == CUDA_SUCCESS) result = asked;
  if (result == CUDA_SUCCESS) return;
  if (report.state == 1) {
    std::string text;
    for (size_t i = 0; i < sizeof report.text && report.text[i] != '\0'; ++i)
      text += report.text[i];
    driver.record_lost_context("a bounds check failed: " + text);
    throw std::runtime_error(
        text + ": a bounds check failed on the GPU, and the kernel trapped (CUDA error " +
        driver.error_text(result) +
        "). After a trap the CUDA context can't be used again: every later CUDA "
        "call in this process fails, so restart it");
  }
  throw std::runtime_error(
      "CUDA error " + driver.error_text(result) + " in running kernel " + kernel_name +
      ", which checks its bounds: none of its checked accesses was out of bounds, so "
      "it (a tile operation of it) or earlier work on its stream failed otherwise" +
      driver.lost_context_note());
}

}  // namespace tilec::runtime

#include "runtime/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <memory>
#include <stdexcept>
#include <type_traits>

namespace tilec::runtime {
namespace {

// Set once, while CudaDriver::get() initializes its static.
std::string& load_failure() {
  static std::string reason;
  return reason;
}

}  // namespace

const CudaDriver* CudaDriver::get() {
  static const CudaDriver* const driver = load(&load_failure());
  return driver;
}

std::string CudaDriver::unavailable_reason() {
  get();
  return load_failure();
}

const CudaDriver* CudaDriver::load(std::string* reason) {
  constexpr const char* kLibrary = "libcuda.so.1";
  void* handle = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    *reason = std::string("cannot load ") + kLibrary + " (" + (error != nullptr ? error : "") +
              "): no NVIDIA driver is installed here";
    return nullptr;
  }
  std::unique_ptr<CudaDriver> driver(new CudaDriver());
  std::string missing;
  const auto bind = [&](auto& function, const char* symbol) {
    void* address = dlsym(handle, symbol);
    if (address == nullptr && missing.empty()) missing = symbol;
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(address);
  };
  bind(driver->cuGetErrorName, "cuGetErrorName");
  bind(driver->cuGetErrorString, "cuGetErrorString");
  bind(driver->cuInit, "cuInit");
  bind(driver->cuDeviceGet, "cuDeviceGet");
  bind(driver->cuDeviceGetCount, "cuDeviceGetCount");
  bind(driver->cuDeviceGetAttribute, "cuDeviceGetAttribute");
  bind(driver->cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  bind(driver->cuCtxGetCurrent, "cuCtxGetCurrent");
  bind(driver->cuCtxSetCurrent, "cuCtxSetCurrent");
  bind(driver->cuCtxGetDevice, "cuCtxGetDevice");
  bind(driver->cuModuleLoadData, "cuModuleLoadData");
  bind(driver->cuModuleGetFunction, "cuModuleGetFunction");
  bind(driver->cuModuleGetGlobal, "cuModuleGetGlobal_v2");
  bind(driver->cuFuncSetAttribute, "cuFuncSetAttribute");
  bind(driver->cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  bind(driver->cuLaunchKernel, "cuLaunchKernel");
  bind(driver->cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel");
  bind(driver->cuStreamSynchronize, "cuStreamSynchronize");
  bind(driver->cuStreamIsCapturing, "cuStreamIsCapturing");
  bind(driver->cuMemAlloc, "cuMemAlloc_v2");
  bind(driver->cuMemFree, "cuMemFree_v2");
  bind(driver->cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  bind(driver->cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  bind(driver->cuMemHostAlloc, "cuMemHostAlloc");
  bind(driver->cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2");
  driver->cuTensorMapEncodeTiled = reinterpret_cast<decltype(driver->cuTensorMapEncodeTiled)>(
      dlsym(handle, "cuTensorMapEncodeTiled"));
  if (!missing.empty()) {
    *reason = std::string(kLibrary) + " has no " + missing + ": the NVIDIA driver is too old";
    dlclose(handle);
    return nullptr;
  }
  if (const CUresult result = driver->cuInit(0); result != CUDA_SUCCESS) {
    *reason = "cuInit failed: " + driver->error_text(result);
    return nullptr;
  }
  // The library stays open and the driver alive for the rest of the process.
  return driver.release();
}

std::string CudaDriver::error_text(CUresult result) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS || name == nullptr) {
    return "CUDA_ERROR_" + std::to_string(result) + " (unknown error code)";
  }
  if (cuGetErrorString(result, &text) != CUDA_SUCCESS || text == nullptr) text = "no description";
  return std::string(name) + " (" + text + ")";
}

void CudaDriver::check(CUresult result, const char* what) const {
  if (result != CUDA_SUCCESS) {
    throw std::runtime_error("CUDA error " + error_text(result) + " in " + what + lost_context_note());
  }
}

void CudaDriver::record_lost_context(const std::string& cause) const {
  std::lock_guard<std::mutex> lock(lost_context_mutex_);
  if (lost_context_cause_.empty()) lost_context_cause_ = cause;
}

std::string CudaDriver::lost_context_note() const {
  std::lock_guard<std::mutex> lock(lost_context_mutex_);
  if (lost_context_cause_.empty()) return "";
  return " (this process's CUDA context has been unusable since " + lost_context_cause_ + ")";
}

int CudaDriver::device_count() const {
  int count = 0;
  check(cuDeviceGetCount(&count), "cuDeviceGetCount");
  return count;
}

int CudaDriver::attribute(int attribute, CUdevice device) const {
  int value = 0;
  check(cuDeviceGetAttribute(&value, attribute, device), "cuDeviceGetAttribute");
  return value;
}

CUcontext CudaDriver::ensure_context() const {
  CUcontext current = nullptr;
  check(cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  return current != nullptr ? current : use_device(0);
}

CUcontext CudaDriver::use_device(int ordinal) const {
  CUcontext primary = nullptr;
  {
    std::lock_guard<std::mutex> lock(contexts_mutex_);
    if (primary_contexts_.empty()) primary_contexts_.resize(device_count(), nullptr);
    if (ordinal < 0 || ordinal >= static_cast<int>(primary_contexts_.size())) {
      throw std::runtime_error("no CUDA device " + std::to_string(ordinal) + " (there are " +
                               std::to_string(primary_contexts_.size()) + ")");
    }
    if (primary_contexts_[ordinal] == nullptr) {
      CUdevice device = 0;
      check(cuDeviceGet(&device, ordinal), "cuDeviceGet");
      CUcontext context = nullptr;
      check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
      primary_contexts_[ordinal] = context;
    }
    primary = primary_contexts_[ordinal];
  }
  CUcontext current = nullptr;
  check(cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current != primary) check(cuCtxSetCurrent(primary), "cuCtxSetCurrent");
  return primary;
}

CUdevice CudaDriver::current_device() const {
  CUdevice device = 0;
  check(cuCtxGetDevice(&device), "cuCtxGetDevice");
  return device;
}

bool cuda_available() { return cuda_unavailable_reason().empty(); }

std::string cuda_unavailable_reason() {
  const CudaDriver* driver = CudaDriver::get();
  if (driver == nullptr) return CudaDriver::unavailable_reason();
  int count = 0;
  if (const CUresult result = driver->cuDeviceGetCount(&count); result != CUDA_SUCCESS) {
    return "cuDeviceGetCount failed: " + driver->error_text(result);
  }
  return count > 0 ? "" : "the CUDA driver sees no device";
}

}  // namespace tilec::runtime

// The CUDA driver API, opened with dlopen("libcuda.so.1") at first use and never linked, so
// libtilec loads and the CPU backend works where there is no NVIDIA driver. Only what tilec
// calls is declared, with the types and numeric values of cuda.h (which is not included).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace tilec::runtime {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;

// cuMemHostAlloc flags
inline constexpr unsigned CU_MEMHOSTALLOC_PORTABLE = 0x01;
inline constexpr unsigned CU_MEMHOSTALLOC_DEVICEMAP = 0x02;

// CUstreamCaptureStatus
inline constexpr int CU_STREAM_CAPTURE_STATUS_NONE = 0;

// CUdevice_attribute
inline constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

// CUfunction_attribute
inline constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

class CudaDriver {
 public:
  // The driver, loaded and initialized (cuInit) once; null when libcuda.so.1 is missing, lacks
  // a function tilec needs, or cuInit fails.
  static const CudaDriver* get();
  // Why get() is null ("" when it is not).
  static std::string unavailable_reason();

  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  // Throws std::runtime_error("CUDA error CUDA_ERROR_X (text) in <what>") unless `result` is
  // CUDA_SUCCESS; after record_lost_context, the message says what made the context unusable.
  void check(CUresult result, const char* what) const;
  void check(CUresult result, const std::string& what) const { check(result, what.c_str()); }
  // "CUDA_ERROR_X (text)".
  std::string error_text(CUresult result) const;
  // Remembers the first `cause` ("a bounds check failed: ...") of an error that leaves the
  // CUDA context unusable for the rest of the process, so that the errors that follow say it.
  void record_lost_context(const std::string& cause) const;
  // " (this process's CUDA context has been unusable since <cause>)", or "" before any.
  std::string lost_context_note() const;

  int device_count() const;
  int attribute(int attribute, CUdevice device) const;

  // The calling thread's current context; when it has none, device 0's primary context,
  // made current. Primary contexts are the ones the CUDA runtime (and so PyTorch) uses, so
  // memory and streams pass freely between tilec and PyTorch.
  CUcontext ensure_context() const;
  // Makes device `ordinal`'s primary context current on the calling thread and returns it.
  CUcontext use_device(int ordinal) const;
  // The device of the calling thread's context (after ensure_context()).
  CUdevice current_device() const;

  // The entry points, named as in cuda.h; versioned ones are bound to the versions cuda.h
  // maps them to (cuMemAlloc is cuMemAlloc_v2, ...).
  CUresult (*cuGetErrorName)(CUresult error, const char** name) = nullptr;
  CUresult (*cuGetErrorString)(CUresult error, const char** text) = nullptr;
  CUresult (*cuInit)(unsigned int flags) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal) = nullptr;
  CUresult (*cuDeviceGetCount)(int* count) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device) = nullptr;
  CUresult (*cuCtxGetCurrent)(CUcontext* context) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext context) = nullptr;
  CUresult (*cuCtxGetDevice)(CUdevice* device) = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule* module, const void* image) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module,
                                  const char* name) = nullptr;
  CUresult (*cuModuleGetGlobal)(CUdeviceptr* pointer, size_t* bytes, CUmodule module,
                                const char* name) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction function, int attribute, int value) = nullptr;
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int* blocks, CUfunction function, int block_size,
                                                          size_t dynamic_shared_bytes) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                             unsigned block_x, unsigned block_y, unsigned block_z,
                             unsigned shared_bytes, CUstream stream, void** params,
                             void** extra) = nullptr;
  CUresult (*cuLaunchCooperativeKernel)(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                                        unsigned block_x, unsigned block_y, unsigned block_z,
                                        unsigned shared_bytes, CUstream stream, void** params) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream stream) = nullptr;
  CUresult (*cuStreamIsCapturing)(CUstream stream, int* status) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr* pointer, size_t bytes) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr pointer) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr destination, const void* source, size_t bytes) = nullptr;
  CUresult (*cuMemcpyDtoH)(void* destination, CUdeviceptr source, size_t bytes) = nullptr;
  CUresult (*cuMemHostAlloc)(void** pointer, size_t bytes, unsigned flags) = nullptr;
  CUresult (*cuMemHostGetDevicePointer)(CUdeviceptr* device_pointer, void* host_pointer,
                                        unsigned flags) = nullptr;
  // CUDA 12 and later; null with an older driver (kernels with TMA copies can't launch).
  CUresult (*cuTensorMapEncodeTiled)(void* tensor_map, int data_type, unsigned rank, void* address,
                                     const uint64_t* dims, const uint64_t* strides, const unsigned* box,
                                     const unsigned* element_strides, int interleave, int swizzle,
                                     int l2_promotion, int oob_fill) = nullptr;

 private:
  CudaDriver() = default;
  // The driver, or null with `reason` set.
  static const CudaDriver* load(std::string* reason);

  // Retained once per device and never released: PyTorch and tilec share them for the whole
  // process.
  mutable std::mutex contexts_mutex_;
  mutable std::vector<CUcontext> primary_contexts_;
  mutable std::mutex lost_context_mutex_;
  mutable std::string lost_context_cause_;
};

// A driver is loaded, cuInit succeeded and there is at least one device.
bool cuda_available();
// Why cuda_available() is false ("" when it is true).
std::string cuda_unavailable_reason();

}  // namespace tilec::runtime

// ROCm's HIP runtime (the module API) and hipRTC, opened with dlopen at first use and never
// linked, so libtilec loads and every other target works where ROCm is missing. Only what
// tilec calls is declared, with the types and numeric values of hip_runtime_api.h and
// hiprtc.h (which are not included).
//
// The runtime is the first of libamdhip64.so, libamdhip64.so.6, libamdhip64.so.5 that loads
// (the dynamic linker's search, then /opt/rocm/lib); hipRTC the first of libhiprtc.so,
// libhiprtc.so.6 (ROCm 6 ships it apart) and the runtime library itself (ROCm 5 exports
// hipRTC from libamdhip64). hipRTC compiles without an AMD GPU.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "runtime/embedded_headers.h"

namespace tilec::runtime {

using hipError_t = int;
using hipModule_t = struct ihipModule_t*;
using hipFunction_t = struct ihipModuleSymbol_t*;
using hipStream_t = struct ihipStream_t*;
using hiprtcResult = int;
using hiprtcProgram = struct _hiprtcProgram*;

inline constexpr hipError_t hipSuccess = 0;
inline constexpr hiprtcResult HIPRTC_SUCCESS = 0;

// The module API and a device: null from get() when the library is missing, lacks a
// function, hipInit fails or no device is found.
class HipRuntime {
 public:
  static const HipRuntime* get();
  // Why get() is null ("" when it is not): what is missing, by name.
  static std::string unavailable_reason();

  const std::string& library_path() const { return library_; }

  hipError_t (*hipInit)(unsigned int flags) = nullptr;
  hipError_t (*hipGetDeviceCount)(int* count) = nullptr;
  const char* (*hipGetErrorName)(hipError_t error) = nullptr;
  hipError_t (*hipModuleLoadData)(hipModule_t* module, const void* image) = nullptr;
  hipError_t (*hipModuleGetFunction)(hipFunction_t* function, hipModule_t module, const char* name) = nullptr;
  hipError_t (*hipModuleLaunchKernel)(hipFunction_t f, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                                      unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared_bytes,
                                      hipStream_t stream, void** params, void** extra) = nullptr;

 private:
  friend struct HipLoader;
  std::string library_;
};

// hipRTC: null from get() when no library with it loads.
class Hiprtc {
 public:
  static const Hiprtc* get();
  static std::string unavailable_reason();

  const std::string& library_path() const { return library_; }
  // "5.2".
  std::string version() const;

  // The code object (an ELF for hipModuleLoadData) of `source` for `arch` ("gfx90a"), the
  // device headers of headers() given to hipRTC as in-memory headers.
  // Throws std::runtime_error with hipRTC's log on failure, and for gfx940 with ROCm 5's
  // hipRTC, which crashes the process there.
  std::string compile(const std::string& source, const std::string& name, const std::string& arch) const;

  // The headers embedded in libtilec that HIP source includes: device/hip/*.h and the
  // device/gpu/*.h they share with device/cuda/.
  static std::vector<const EmbeddedHeader*> headers();

  // The options of compile() for `arch`.
  static std::vector<std::string> options(const std::string& arch);

  hiprtcResult (*hiprtcVersion)(int* major, int* minor) = nullptr;
  const char* (*hiprtcGetErrorString)(hiprtcResult result) = nullptr;
  hiprtcResult (*hiprtcCreateProgram)(hiprtcProgram* prog, const char* src, const char* name, int num_headers,
                                      const char* const* headers, const char* const* include_names) = nullptr;
  hiprtcResult (*hiprtcDestroyProgram)(hiprtcProgram* prog) = nullptr;
  hiprtcResult (*hiprtcCompileProgram)(hiprtcProgram prog, int num_options, const char* const* options) = nullptr;
  hiprtcResult (*hiprtcGetProgramLogSize)(hiprtcProgram prog, size_t* size) = nullptr;
  hiprtcResult (*hiprtcGetProgramLog)(hiprtcProgram prog, char* log) = nullptr;
  hiprtcResult (*hiprtcGetCodeSize)(hiprtcProgram prog, size_t* size) = nullptr;
  hiprtcResult (*hiprtcGetCode)(hiprtcProgram prog, char* code) = nullptr;

 private:
  friend struct HipLoader;
  std::string library_;
};

}  // namespace tilec::runtime

// NVRTC, opened with dlopen at first use and never linked, compiling generated CUDA C++ into a
// cubin for one GPU architecture, or into PTX.
//
// The library is the first of libnvrtc.so, libnvrtc.so.13, libnvrtc.so.12 that loads from:
//   1. each directory of $TILEC_NVIDIA_LIB_DIRS (colon-separated), an explicit choice;
//   2. the dynamic linker's own search ($LD_LIBRARY_PATH, the ldconfig cache, or a copy this
//      process already loaded, such as PyTorch's);
//   3. $CUDA_HOME/lib64, then /usr/local/cuda/lib64;
//   4. the NVIDIA pip wheels, <dir>/nvidia/cu13/lib then <dir>/nvidia/cuda_nvrtc/lib, for <dir>
//      each directory above the file this code was loaded from (dladdr): an installed libtilec
//      lies under site-packages, beside nvidia/.
// The CUDA headers (cuda_fp16.h, cuda_bf16.h, cuda_fp8.h, ...) come from the first directory
// holding cuda_fp16.h among those that ship with the loaded NVRTC (<lib>/../include, and a
// wheel's <lib>/../../cuda_runtime/include), $CUDA_HOME/include, /usr/local/cuda/include and the
// wheels' nvidia/cu13/include and nvidia/cuda_runtime/include; they are passed with -I.
//
// The device headers embedded in libtilec (device/**.h) are NVRTC in-memory headers named by
// their path under device/, so generated code and the headers themselves write
// #include "cuda/<name>.h".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tilec::runtime {

// An in-memory header that the source can #include "name".
struct NvrtcHeader {
  std::string name;
  std::string text;
};

struct CompileResult {
  std::string binary;  // the cubin, or the PTX text
  std::string log;     // NVRTC's warnings, often empty
};

class NvrtcCompiler {
 public:
  // NVRTC, loaded once; null when no library loads.
  static const NvrtcCompiler* get();
  // Why get() is null ("" when it is not).
  static std::string unavailable_reason();

  NvrtcCompiler(const NvrtcCompiler&) = delete;
  NvrtcCompiler& operator=(const NvrtcCompiler&) = delete;

  // "13.0".
  std::string version() const;
  const std::string& library_path() const { return library_path_; }
  // Where the CUDA headers come from; "" when none were found.
  const std::string& include_dir() const { return include_dir_; }

  // The options of a compile for `arch`; `extra_options` come last.
  std::vector<std::string> options(const std::string& arch,
                                   const std::vector<std::string>& extra_options) const;
  // What decides the output besides the source and the headers: NVRTC's version and
  // location and the options, for cache keys.
  std::string identity(const std::string& arch,
                       const std::vector<std::string>& extra_options) const;
  // The same for an NVRTC of `version` at `library_path` using the headers of `include_dir`
  // (runtime/cuda/nvrtc_identity.h: without loading it).
  static std::string identity_of(const std::string& version, const std::string& library_path,
                                 const std::string& include_dir, const std::string& arch,
                                 const std::vector<std::string>& extra_options);

  // Compiles `source`, called `name` in messages, into a cubin for `arch` ("sm_90a", "sm_80").
  // On failure throws std::runtime_error holding NVRTC's log; each error at a line of `source`
  // is followed by that line and by the nearest `// file.py:LINE: text` comment above it, the
  // kernel statement the generated code came from.
  CompileResult compile(const std::string& source, const std::string& name, const std::string& arch,
                        const std::vector<std::string>& extra_options = {},
                        const std::vector<NvrtcHeader>& extra_headers = {}) const;
  // The same, into PTX for the virtual architecture of `arch` (compute_90a for sm_90a).
  CompileResult ptx(const std::string& source, const std::string& name, const std::string& arch,
                    const std::vector<std::string>& extra_options = {},
                    const std::vector<NvrtcHeader>& extra_headers = {}) const;

 private:
  using Program = struct NvrtcProgramImpl*;
  using Result = int;

  NvrtcCompiler() = default;
  static std::vector<std::string> options_for(const std::string& include_dir, const std::string& arch,
                                              const std::vector<std::string>& extra_options);
  // The compiler, or null with `reason` set.
  static const NvrtcCompiler* load(std::string* reason);

  CompileResult run(const std::string& source, const std::string& name, const std::string& arch,
                    const std::vector<std::string>& extra_options,
                    const std::vector<NvrtcHeader>& extra_headers, bool to_ptx) const;
  void check(Result result, const char* what) const;

  std::string library_path_;
  std::string include_dir_;
  int major_ = 0;
  int minor_ = 0;

  const char* (*nvrtcGetErrorString_)(Result result) = nullptr;
  Result (*nvrtcVersion_)(int* major, int* minor) = nullptr;
  Result (*nvrtcCreateProgram_)(Program* program, const char* source, const char* name,
                                int header_count, const char* const* headers,
                                const char* const* include_names) = nullptr;
  Result (*nvrtcDestroyProgram_)(Program* program) = nullptr;
  Result (*nvrtcCompileProgram_)(Program program, int option_count,
                                 const char* const* options) = nullptr;
  Result (*nvrtcGetProgramLogSize_)(Program program, size_t* size) = nullptr;
  Result (*nvrtcGetProgramLog_)(Program program, char* log) = nullptr;
  Result (*nvrtcGetCUBINSize_)(Program program, size_t* size) = nullptr;
  Result (*nvrtcGetCUBIN_)(Program program, char* cubin) = nullptr;
  Result (*nvrtcGetPTXSize_)(Program program, size_t* size) = nullptr;
  Result (*nvrtcGetPTX_)(Program program, char* ptx) = nullptr;
};

}  // namespace tilec::runtime

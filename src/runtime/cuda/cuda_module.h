// A generated CUDA kernel. Its cubin is found first in this process's memory, then in the disk
// cache (<cache>/cuda/<key>.cubin), else compiled with NVRTC and stored there; none of that
// needs a GPU. The cubin is loaded into a device context at the first launch there.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/cuda/bounds_report.h"
#include "runtime/cuda/cuda_driver.h"

namespace tilec::runtime {

// A grid or block shape, as CUDA's dim3.
struct LaunchDims {
  unsigned x = 1;
  unsigned y = 1;
  unsigned z = 1;
};

struct Cubin {
  std::string key;   // the cache key
  std::string path;  // <cache>/cuda/<key>.cubin
  std::string bytes;
  bool from_disk = false;  // false when this call compiled it
};

class CudaModule {
 public:
  // The module of `source` with its kernel `kernel_name` (extern "C" __global__), built for
  // `arch` ("sm_90a", "sm_80"; device_arch() gives the current device's) with the NVRTC options
  // `nvrtc_options` besides tilec's own ({"--use_fast_math"}). Threads loading one key share one
  // build. Throws std::runtime_error when NVRTC is missing or fails.
  static std::shared_ptr<CudaModule> load(const std::string& source, const std::string& kernel_name,
                                          const std::string& arch,
                                          const std::vector<std::string>& nvrtc_options = {});

  // sha256 of the source, NVRTC's identity for `arch` and `nvrtc_options` (its options among
  // them), `arch` and the embedded device headers.
  static std::string cache_key(const std::string& source, const std::string& arch,
                               const std::vector<std::string>& nvrtc_options = {});
  // The cubin of `source` from the disk cache, else compiled (as "<kernel_name>.cu" in NVRTC's
  // messages) and stored there with the source beside it as <key>.cu. A damaged entry is
  // rebuilt.
  static Cubin build_cubin(const std::string& source, const std::string& kernel_name,
                           const std::string& arch, const std::vector<std::string>& nvrtc_options = {});

  // The PTX of `source` for `arch`'s virtual architecture (compute_90a for sm_90a), to read;
  // compiled each time, not cached. Throws std::runtime_error when NVRTC is missing or fails.
  static std::string ptx(const std::string& source, const std::string& kernel_name,
                         const std::string& arch, const std::vector<std::string>& nvrtc_options = {});

  // The architecture to build for on the current device: "sm_90a" for compute capability 9.0
  // (so that wgmma and setmaxnreg are there), else "sm_<major><minor>". Throws when there is no
  // CUDA device.
  static std::string device_arch();

  // Forgets the modules loaded so far, so the next load of each goes to the disk cache (for
  // tests). Loads in progress are kept.
  static void clear_memory_cache();

  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;

  // Launches the kernel on `stream` (a CUstream; null for the default stream) in the calling
  // thread's current context (device 0's primary context when it has none; make another
  // device's current first with CudaDriver::use_device). `args` points to each kernel
  // parameter, as for cuLaunchKernel. The kernel's dynamic shared memory limit is raised
  // (cuFuncSetAttribute) once for each larger size, so sizes over 48 KiB work.
  // Throws std::runtime_error naming the kernel. A kernel built with bounds checks is waited
  // for, and a failed check is an error that says which access it was (runtime/cuda/bounds_report.h).
  // `cooperative` (a kernel with T.sync_grid): every block resident at once, by a cooperative
  // launch; a grid of more blocks than one wave (wave_blocks) is an error before it launches.
  void launch(LaunchDims grid, LaunchDims block, size_t dynamic_shared_bytes, void* stream,
              void** args, bool cooperative = false) const;

  // The blocks of one wave on the current device: the multiprocessors times the blocks of
  // `block_threads` threads and `dynamic_shared_bytes` each holds at once (at least 1).
  int64_t wave_blocks(int block_threads, size_t dynamic_shared_bytes) const;

  const std::string& kernel_name() const { return kernel_name_; }
  const std::string& arch() const { return arch_; }
  const std::string& cubin_path() const { return cubin_.path; }
  const std::string& cubin() const { return cubin_.bytes; }
  // True when the cubin came from the disk cache, false when this process compiled it.
  bool loaded_from_disk() const { return cubin_.from_disk; }

 private:
  // The kernel in one context. Modules stay loaded for the life of the process, as the CPU
  // backend's libraries do: work launched from one may still be running when its last handle
  // goes.
  struct Loaded {
    CUfunction function = nullptr;
    // The driver's default is 48 KiB less the kernel's static shared memory; raising it for
    // any dynamic size spares reading that.
    size_t allowed_dynamic_shared = 0;
    int64_t wave_blocks = 0;  // 0 until wave_blocks() has asked the driver
    BoundsReport* bounds_report = nullptr;  // set when the kernel checks its bounds
  };

  CudaModule(std::string kernel_name, std::string arch, Cubin cubin, bool checks_bounds)
      : kernel_name_(std::move(kernel_name)),
        arch_(std::move(arch)),
        cubin_(std::move(cubin)),
        checks_bounds_(checks_bounds) {}

  // The kernel in `context`, loading the module there first and raising its dynamic shared
  // memory limit to `dynamic_shared_bytes` when needed. Its function and report stay as they are.
  const Loaded& loaded_in(const CudaDriver& driver, CUcontext context, size_t dynamic_shared_bytes) const;

  std::string kernel_name_;
  std::string arch_;
  Cubin cubin_;
  // Built with bounds checks: only then has the module a tilec_bounds_report to look up.
  bool checks_bounds_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<CUcontext, Loaded> loaded_;
};

}  // namespace tilec::runtime

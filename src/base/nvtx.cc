#include "base/nvtx.h"

#include <dlfcn.h>

#include <atomic>
#include <mutex>

#include "base/env_switch.h"
#include "base/log.h"
#include "base/nvidia_libraries.h"

namespace tilec {
namespace {

struct NvtxLibrary {
  int (*range_push)(const char* message) = nullptr;
  int (*range_pop)() = nullptr;
  std::string failure;  // why it isn't loaded
};

// Loaded once, on the first range asked for.
const NvtxLibrary& library() {
  static const NvtxLibrary loaded = [] {
    NvtxLibrary l;
    std::string load_errors;
    void* handle = open_nvidia_library({"libnvtx3interop.so.1", "libnvtx3interop.so"},
                                       {"nvidia/cu13/lib", "nvidia/nvtx/lib"}, &load_errors);
    if (handle == nullptr) {
      l.failure = "cannot load libnvtx3interop.so.1 from $TILEC_NVIDIA_LIB_DIRS, the library search path, "
                  "$CUDA_HOME/lib64, /usr/local/cuda/lib64 or the NVIDIA pip wheels (the CUDA 13 toolkit has it)" +
                  load_errors;
      return l;
    }
    l.range_push = reinterpret_cast<int (*)(const char*)>(dlsym(handle, "nvtxRangePushA"));
    l.range_pop = reinterpret_cast<int (*)()>(dlsym(handle, "nvtxRangePop"));
    if (l.range_push == nullptr || l.range_pop == nullptr) {
      l.failure = "libnvtx3interop has no nvtxRangePushA or nvtxRangePop";
      l.range_push = nullptr;
      l.range_pop = nullptr;
    }
    return l;
  }();
  return loaded;
}

// -1: not decided yet ($TILEC_NVTX is read on first use), 0: off, 1: on.
std::atomic<int> asked{-1};

bool ranges_asked() {
  int state = asked.load(std::memory_order_relaxed);
  if (state < 0) {
    bool on = false;
    try {
      on = env_switch("TILEC_NVTX");
    } catch (const std::invalid_argument& e) {
      warn_once("TILEC_NVTX", std::string(e.what()) + "; NVTX ranges stay off");
    }
    int undecided = -1;
    asked.compare_exchange_strong(undecided, on ? 1 : 0);
    state = asked.load(std::memory_order_relaxed);
  }
  return state == 1;
}

}  // namespace

void set_nvtx(bool on) { asked.store(on ? 1 : 0, std::memory_order_relaxed); }

bool nvtx_on() { return ranges_asked() && library().range_push != nullptr; }

std::string nvtx_unavailable_reason() { return ranges_asked() ? library().failure : ""; }

NvtxRange::NvtxRange(const std::string& name) {
  if (!ranges_asked()) return;
  const NvtxLibrary& l = library();
  if (l.range_push == nullptr) {
    warn_once("nvtx", "NVTX ranges were asked for but are off: " + l.failure);
    return;
  }
  l.range_push(name.c_str());
  pushed_ = true;
}

NvtxRange::~NvtxRange() {
  if (pushed_) library().range_pop();
}

}  // namespace tilec

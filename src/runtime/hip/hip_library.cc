#include "runtime/hip/hip_library.h"

#include <dlfcn.h>

#include <memory>
#include <stdexcept>
#include <type_traits>

#include "runtime/embedded_headers.h"

namespace tilec::runtime {

struct HipLoader {
  // The first of `names` (then under /opt/rocm/lib) that dlopen loads, or null; `tried`
  // collects what each attempt said.
  static void* open(const std::vector<std::string>& names, std::string* path, std::string* tried) {
    for (const std::string& dir : {std::string(), std::string("/opt/rocm/lib/")}) {
      for (const std::string& name : names) {
        if (void* handle = dlopen((dir + name).c_str(), RTLD_NOW | RTLD_LOCAL)) {
          *path = dir + name;
          return handle;
        }
        const char* error = dlerror();
        if (dir.empty()) *tried += std::string(tried->empty() ? "" : "; ") + (error ? error : name);
      }
    }
    return nullptr;
  }

  // Binds every function of `bind_all` from `handle`; the first missing symbol, or "".
  template <class Bindings>
  static std::string bind(void* handle, Bindings bind_all) {
    std::string missing;
    auto bind_one = [&](auto& function, const char* symbol) {
      void* address = dlsym(handle, symbol);
      if (address == nullptr && missing.empty()) missing = symbol;
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(address);
    };
    bind_all(bind_one);
    return missing;
  }

  static const HipRuntime* load_runtime(std::string* reason) {
    std::string path, tried;
    void* handle = open({"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"}, &path, &tried);
    if (!handle) {
      *reason = "the HIP runtime libamdhip64.so is not installed (" + tried + "): install ROCm";
      return nullptr;
    }
    auto runtime = std::make_unique<HipRuntime>();
    runtime->library_ = path;
    std::string missing = bind(handle, [&](auto&& b) {
      b(runtime->hipInit, "hipInit");
      b(runtime->hipGetDeviceCount, "hipGetDeviceCount");
      b(runtime->hipGetErrorName, "hipGetErrorName");
      b(runtime->hipModuleLoadData, "hipModuleLoadData");
      b(runtime->hipModuleGetFunction, "hipModuleGetFunction");
      b(runtime->hipModuleLaunchKernel, "hipModuleLaunchKernel");
    });
    if (!missing.empty()) {
      *reason = path + " has no " + missing + ": the HIP runtime is too old";
      return nullptr;
    }
    auto error = [&](hipError_t e) { return std::string(runtime->hipGetErrorName(e)) + " (" + std::to_string(e) + ")"; };
    if (hipError_t e = runtime->hipInit(0); e != hipSuccess) {
      *reason = "the HIP runtime (" + path + ") loads, but hipInit failed: " + error(e) + "; no usable AMD GPU here";
      return nullptr;
    }
    int count = 0;
    if (hipError_t e = runtime->hipGetDeviceCount(&count); e != hipSuccess || count == 0) {
      *reason = "the HIP runtime (" + path + ") sees no AMD GPU" + (e != hipSuccess ? ": " + error(e) : "");
      return nullptr;
    }
    return runtime.release();
  }

  static const Hiprtc* load_hiprtc(std::string* reason) {
    std::string path, tried;
    void* handle = open({"libhiprtc.so", "libhiprtc.so.6", "libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"},
                        &path, &tried);
    if (!handle) {
      *reason = "hipRTC is not installed (" + tried + "): install ROCm's hipRTC, or hipcc";
      return nullptr;
    }
    auto rtc = std::make_unique<Hiprtc>();
    rtc->library_ = path;
    std::string missing = bind(handle, [&](auto&& b) {
      b(rtc->hiprtcVersion, "hiprtcVersion");
      b(rtc->hiprtcGetErrorString, "hiprtcGetErrorString");
      b(rtc->hiprtcCreateProgram, "hiprtcCreateProgram");
      b(rtc->hiprtcDestroyProgram, "hiprtcDestroyProgram");
      b(rtc->hiprtcCompileProgram, "hiprtcCompileProgram");
      b(rtc->hiprtcGetProgramLogSize, "hiprtcGetProgramLogSize");
      b(rtc->hiprtcGetProgramLog, "hiprtcGetProgramLog");
      b(rtc->hiprtcGetCodeSize, "hiprtcGetCodeSize");
      b(rtc->hiprtcGetCode, "hiprtcGetCode");
    });
    if (!missing.empty()) {
      *reason = path + " has no " + missing + ": hipRTC is missing or too old";
      return nullptr;
    }
    return rtc.release();
  }
};

namespace {

struct Loaded {
  const HipRuntime* runtime;
  std::string runtime_reason;
  const Hiprtc* hiprtc;
  std::string hiprtc_reason;
};

const Loaded& loaded_runtime() {
  static const Loaded l = [] {
    Loaded r{};
    r.runtime = HipLoader::load_runtime(&r.runtime_reason);
    return r;
  }();
  return l;
}

const Loaded& loaded_hiprtc() {
  static const Loaded l = [] {
    Loaded r{};
    r.hiprtc = HipLoader::load_hiprtc(&r.hiprtc_reason);
    return r;
  }();
  return l;
}

}  // namespace

const HipRuntime* HipRuntime::get() { return loaded_runtime().runtime; }
std::string HipRuntime::unavailable_reason() { return loaded_runtime().runtime_reason; }
const Hiprtc* Hiprtc::get() { return loaded_hiprtc().hiprtc; }
std::string Hiprtc::unavailable_reason() { return loaded_hiprtc().hiprtc_reason; }

std::string Hiprtc::version() const {
  int major = 0, minor = 0;
  hiprtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<std::string> Hiprtc::options(const std::string& arch) {
  return {"--offload-arch=" + arch, "-O3", "-std=c++17"};
}

std::vector<const EmbeddedHeader*> Hiprtc::headers() {
  std::vector<const EmbeddedHeader*> out;
  for (const EmbeddedHeader& h : embedded_headers()) {
    const std::string path = h.path;
    if (path.rfind("hip/", 0) == 0 || path.rfind("gpu/", 0) == 0) out.push_back(&h);
  }
  return out;
}

std::string Hiprtc::compile(const std::string& source, const std::string& name, const std::string& arch) const {
  if (arch == "gfx940" && version().rfind("5.", 0) == 0)
    throw std::runtime_error("hipRTC " + version() + " (" + library_ + ") crashes compiling for gfx940 (its comgr "
                             "frees a bad pointer); use hipcc for gfx940");
  std::vector<const char*> headers, names;
  for (const EmbeddedHeader* h : Hiprtc::headers()) {
    headers.push_back(h->text.c_str());
    names.push_back(h->path);
  }
  hiprtcProgram program = nullptr;
  auto check = [&](hiprtcResult r, const char* what) {
    if (r != HIPRTC_SUCCESS)
      throw std::runtime_error(std::string("hipRTC ") + what + " failed: " + hiprtcGetErrorString(r));
  };
  check(hiprtcCreateProgram(&program, source.c_str(), name.c_str(), static_cast<int>(headers.size()), headers.data(),
                            names.data()),
        "hiprtcCreateProgram");
  struct Destroy {
    const Hiprtc* rtc;
    hiprtcProgram* program;
    ~Destroy() { rtc->hiprtcDestroyProgram(program); }
  } destroy{this, &program};
  std::vector<std::string> opts = options(arch);
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  const hiprtcResult compiled = hiprtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
  size_t log_size = 0;
  std::string log;
  if (hiprtcGetProgramLogSize(program, &log_size) == HIPRTC_SUCCESS && log_size > 1) {
    log.resize(log_size);
    hiprtcGetProgramLog(program, log.data());
    log.resize(log_size - 1);
  }
  if (compiled != HIPRTC_SUCCESS)
    throw std::runtime_error("hipRTC could not compile " + name + " for " + arch + " (" +
                             hiprtcGetErrorString(compiled) + "):\n" + log);
  size_t size = 0;
  check(hiprtcGetCodeSize(program, &size), "hiprtcGetCodeSize");
  std::string code(size, '\0');
  check(hiprtcGetCode(program, code.data()), "hiprtcGetCode");
  return code;
}

}  // namespace tilec::runtime

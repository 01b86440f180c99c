#include "runtime/cuda/cuda_module.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>

#include "base/hash.h"
#include "base/log.h"
#include "runtime/build_lock.h"
#include "runtime/cache.h"
#include "runtime/embedded_headers.h"
#include "runtime/module_cache.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "runtime/cuda/nvrtc_identity.h"

namespace tilec::runtime {
namespace {

ModuleCache<CudaModule> modules;

const NvrtcCompiler& nvrtc() {
  const NvrtcCompiler* compiler = NvrtcCompiler::get();
  if (compiler == nullptr) {
    throw std::runtime_error("cannot compile CUDA kernels: " + NvrtcCompiler::unavailable_reason());
  }
  return *compiler;
}

const CudaDriver& driver() {
  const CudaDriver* driver = CudaDriver::get();
  if (driver == nullptr) throw std::runtime_error("no CUDA: " + CudaDriver::unavailable_reason());
  return *driver;
}

}  // namespace

namespace {

std::string key_of(const std::string& source, const std::string& arch, const std::string& nvrtc_identity) {
  return sha256_hex(source + "\n" + nvrtc_identity + "\n" + arch + "\n" + embedded_headers_hash());
}

// The key under the identity recorded by an earlier load of NVRTC when it still holds (no load
// here), else under the loaded NVRTC's.
std::string recorded_or_loaded_key(const std::string& source, const std::string& arch,
                                   const std::vector<std::string>& nvrtc_options) {
  if (std::optional<std::string> identity = recorded_nvrtc_identity(arch, nvrtc_options))
    return key_of(source, arch, *identity);
  return CudaModule::cache_key(source, arch, nvrtc_options);
}

}  // namespace

std::string CudaModule::cache_key(const std::string& source, const std::string& arch,
                                  const std::vector<std::string>& nvrtc_options) {
  return key_of(source, arch, nvrtc().identity(arch, nvrtc_options));
}

Cubin CudaModule::build_cubin(const std::string& source, const std::string& kernel_name,
                              const std::string& arch, const std::vector<std::string>& nvrtc_options) {
  Cubin cubin;
  const std::string dir = cache_subdir("cuda");
  auto read_cached = [&](const std::string& key) {
    cubin.key = key;
    cubin.path = dir + "/" + key + ".cubin";
    StageTimer timer("cuda module " + key.substr(0, 16) + ": read disk cache");
    std::optional<std::string> bytes = read_verified(cubin.path);
    if (!bytes) return false;
    log(LogLevel::Debug, "cuda module " + key.substr(0, 16) + ": from disk " + cubin.path);
    cubin.bytes = std::move(*bytes);
    cubin.from_disk = true;
    return true;
  };
  const std::string recorded_key = recorded_or_loaded_key(source, arch, nvrtc_options);
  if (read_cached(recorded_key)) return cubin;
  // A miss: the cubin is built, and keyed, by the NVRTC this process loads.
  const std::string key = cache_key(source, arch, nvrtc_options);
  record_nvrtc_identity();
  if (key != recorded_key && read_cached(key)) return cubin;
  const BuildLock lock(dir + "/" + key + ".cubin");
  if (read_cached(key)) return cubin;  // built by the process that held the lock
  const std::string name = "cuda module " + key.substr(0, 16);

  StageTimer timer(name + ": build");
  const std::string source_path = dir + "/" + cubin.key + ".cu";  // kept for debugging
  write_atomically(source_path, source);
  CompileResult result;
  try {
    result = nvrtc().compile(source, kernel_name + ".cu", arch, nvrtc_options);
  } catch (const std::runtime_error& error) {
    throw std::runtime_error(std::string(error.what()) + "(generated source: " + source_path + ")");
  }
  if (!result.log.empty()) log(LogLevel::Debug, name + ": NVRTC says:\n" + result.log);
  store_verified(cubin.path, result.binary);
  log(LogLevel::Debug, name + ": built " + cubin.path);
  cubin.bytes = std::move(result.binary);
  return cubin;
}

std::string CudaModule::ptx(const std::string& source, const std::string& kernel_name,
                            const std::string& arch, const std::vector<std::string>& nvrtc_options) {
  CompileResult result = nvrtc().ptx(source, kernel_name + ".cu", arch, nvrtc_options);
  if (!result.log.empty()) log(LogLevel::Debug, kernel_name + ": NVRTC says:\n" + result.log);
  return std::move(result.binary);
}

std::shared_ptr<CudaModule> CudaModule::load(const std::string& source,
                                             const std::string& kernel_name,
                                             const std::string& arch,
                                             const std::vector<std::string>& nvrtc_options) {
  const std::string key = recorded_or_loaded_key(source, arch, nvrtc_options);
  bool from_memory = false;
  std::shared_ptr<CudaModule> module = modules.get(
      key + "/" + kernel_name,
      [&] {
        return std::shared_ptr<CudaModule>(
            new CudaModule(kernel_name, arch, build_cubin(source, kernel_name, arch, nvrtc_options),
                           source.find("#include \"cuda/bounds_check.h\"") != std::string::npos));
      },
      &from_memory);
  if (from_memory) log(LogLevel::Debug, "cuda module " + key.substr(0, 16) + ": from memory");
  return module;
}

void CudaModule::clear_memory_cache() { modules.clear(); }

std::string CudaModule::device_arch() {
  const CudaDriver& cuda = driver();
  cuda.ensure_context();
  const CUdevice device = cuda.current_device();
  const int major = cuda.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  const int minor = cuda.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  return "sm_" + std::to_string(major) + std::to_string(minor) +
         (major == 9 && minor == 0 ? "a" : "");
}

const CudaModule::Loaded& CudaModule::loaded_in(const CudaDriver& cuda, CUcontext context,
                                                size_t dynamic_shared_bytes) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = loaded_.find(context);
  if (it == loaded_.end()) {
    CUmodule module = nullptr;
    if (const CUresult result = cuda.cuModuleLoadData(&module, cubin_.bytes.data());
        result != CUDA_SUCCESS) {
      cuda.check(result, "loading kernel " + kernel_name_ + " (built for " + arch_ + ", " +
                             cubin_.path + ") on a device of " + device_arch());
    }
    Loaded fresh;
    cuda.check(cuda.cuModuleGetFunction(&fresh.function, module, kernel_name_.c_str()),
               "looking up kernel " + kernel_name_ + " in its module " + cubin_.path);
    if (checks_bounds_) fresh.bounds_report = attach_bounds_report(cuda, module, kernel_name_);
    it = loaded_.emplace(context, fresh).first;
    log(LogLevel::Debug, "cuda module " + cubin_.key.substr(0, 16) + ": kernel " + kernel_name_ +
                             " loaded on device " + std::to_string(cuda.current_device()));
  }
  Loaded& loaded = it->second;
  if (dynamic_shared_bytes > loaded.allowed_dynamic_shared) {
    const int limit = cuda.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                     cuda.current_device());
    if (dynamic_shared_bytes > static_cast<size_t>(limit)) {
      throw std::runtime_error("kernel " + kernel_name_ + " asks for " +
                               std::to_string(dynamic_shared_bytes) +
                               " bytes of dynamic shared memory; a block of this device may "
                               "have at most " +
                               std::to_string(limit));
    }
    cuda.check(
        cuda.cuFuncSetAttribute(loaded.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                static_cast<int>(dynamic_shared_bytes)),
        "allowing kernel " + kernel_name_ + " " + std::to_string(dynamic_shared_bytes) +
            " bytes of dynamic shared memory");
    loaded.allowed_dynamic_shared = dynamic_shared_bytes;
  }
  return loaded;
}

int64_t CudaModule::wave_blocks(int block_threads, size_t dynamic_shared_bytes) const {
  const CudaDriver& cuda = driver();
  const CUcontext context = cuda.ensure_context();
  const CUfunction function = loaded_in(cuda, context, dynamic_shared_bytes).function;
  std::lock_guard<std::mutex> lock(mutex_);
  Loaded& loaded = loaded_.at(context);
  if (loaded.wave_blocks == 0) {
    int per_multiprocessor = 0;
    cuda.check(cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, function, block_threads,
                                                                dynamic_shared_bytes),
               "finding how many blocks of kernel " + kernel_name_ + " a multiprocessor holds");
    const int multiprocessors = cuda.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cuda.current_device());
    loaded.wave_blocks = std::max<int64_t>(1, int64_t{per_multiprocessor} * multiprocessors);
  }
  return loaded.wave_blocks;
}

void CudaModule::launch(LaunchDims grid, LaunchDims block, size_t dynamic_shared_bytes,
                        void* stream, void** args, bool cooperative) const {
  const CudaDriver* cuda = CudaDriver::get();
  if (cuda == nullptr) {
    throw std::runtime_error("cannot launch CUDA kernel " + kernel_name_ + ": " +
                             CudaDriver::unavailable_reason());
  }
  const CUcontext context = cuda->ensure_context();
  const Loaded& loaded = loaded_in(*cuda, context, dynamic_shared_bytes);
  if (cooperative) {
    const int64_t blocks = int64_t{grid.x} * grid.y * grid.z;
    const int64_t wave = wave_blocks(static_cast<int>(block.x * block.y * block.z), dynamic_shared_bytes);
    if (blocks > wave)
      throw std::runtime_error("kernel " + kernel_name_ + " waits for its whole grid (T.sync_grid), so its " +
                               std::to_string(blocks) + " blocks must all be resident at once; this GPU holds " +
                               std::to_string(wave) + " of them: launch at most that many");
  }
  const CUresult result =
      cooperative ? cuda->cuLaunchCooperativeKernel(loaded.function, grid.x, grid.y, grid.z, block.x, block.y,
                                                    block.z, static_cast<unsigned>(dynamic_shared_bytes),
                                                    static_cast<CUstream>(stream), args)
                  : cuda->cuLaunchKernel(loaded.function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                         static_cast<unsigned>(dynamic_shared_bytes), static_cast<CUstream>(stream),
                                         args, nullptr);
  if (result != CUDA_SUCCESS) {
    const auto dims = [](LaunchDims d) {
      return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
    };
    cuda->check(result, "launching kernel " + kernel_name_ + " (grid " + dims(grid) + ", block " +
                            dims(block) + ", " + std::to_string(dynamic_shared_bytes) +
                            " bytes of dynamic shared memory)");
  }
  if (loaded.bounds_report != nullptr) {
    wait_for_checked_launch(*cuda, *loaded.bounds_report, static_cast<CUstream>(stream), kernel_name_);
  }
}

}  // namespace tilec::runtime

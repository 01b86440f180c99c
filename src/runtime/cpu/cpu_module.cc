#include "runtime/cpu/cpu_module.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "base/hash.h"
#include "base/log.h"
#include "runtime/build_lock.h"
#include "runtime/cache.h"
#include "runtime/cpu/host_compiler.h"
#include "runtime/embedded_headers.h"
#include "runtime/embedded_headers_dir.h"
#include "runtime/module_cache.h"

namespace tilec::runtime {
namespace {

// Keyed by cache key and entry name.
ModuleCache<CpuModule> modules;

// Parsing the kernel header and the standard headers it includes is most of a small kernel's
// build time, so it is precompiled once per header set and compiler (into a directory of its
// own, so a header set is shared by compilers whose precompiled headers differ).
std::string precompiled_include_dir(const std::string& headers_dir) {
  const HostCompiler& compiler = HostCompiler::get();
  const std::string dir = headers_dir + "-pch-" + sha256_hex(compiler.identity()).substr(0, 16);
  const std::string header = dir + "/cpu/tilec_cpu.h";
  const std::string pch = header + ".gch";
  const std::string text = read_file(headers_dir + "/cpu/tilec_cpu.h").value_or("");
  if (read_file(header) != text) write_atomically(header, text);
  // The compiler reads the precompiled header by its path: one that is not this user's private
  // file (anything in its place, a folder included, which GCC would search) is rebuilt.
  if (open_private_file(pch)) return dir;
  const BuildLock lock(pch);
  if (open_private_file(pch)) return dir;  // made by the lock's holder
  std::error_code ignored;
  std::filesystem::remove_all(pch, ignored);
  const std::string temp = unique_temp_path(pch);
  if (compiler.precompile_header(header, temp)) {
    std::filesystem::permissions(temp, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    std::filesystem::rename(temp, pch);
  } else {
    std::filesystem::remove(temp);
  }
  return dir;
}

// dlopen of the file open as `file`, by its /proc/self/fd name, so that the library loaded is
// the file that was checked, with no path looked up again. glibc answers a name it has loaded
// before without opening anything, and the name outlives its descriptor: a later file open under
// the same number would get the earlier library. So each name used is remembered with its file,
// and a number whose name holds another file is skipped by duplicating the descriptor.
void* dlopen_file(int file, const struct stat& status, std::string* error) {
  static std::mutex mutex;
  static std::map<std::string, std::pair<dev_t, ino_t>> loaded_names;
  const std::pair<dev_t, ino_t> id{status.st_dev, status.st_ino};
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<UniqueFd> skipped;  // held until the load is done, so no number comes back
  std::string name = "/proc/self/fd/" + std::to_string(file);
  for (auto it = loaded_names.find(name); it != loaded_names.end() && it->second != id;
       it = loaded_names.find(name)) {
    skipped.emplace_back(::fcntl(file, F_DUPFD_CLOEXEC, 0));
    if (!skipped.back()) {
      *error = "cannot duplicate a file descriptor: " + std::string(std::strerror(errno));
      return nullptr;
    }
    name = "/proc/self/fd/" + std::to_string(skipped.back().get());
  }
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* message = dlerror();
    *error = message != nullptr ? message : "dlopen failed";
    return nullptr;
  }
  loaded_names[name] = id;
  return handle;
}

// The entry of the library open as `file`, or nullptr with `error` set.
CpuModule::Entry open_library(int file, const struct stat& status, const std::string& path,
                              const std::string& entry_name, std::string* error,
                              void** handle_out) {
  void* handle = dlopen_file(file, status, error);
  *handle_out = handle;
  if (handle == nullptr) return nullptr;
  dlerror();
  void* symbol = dlsym(handle, entry_name.c_str());
  if (symbol == nullptr) {
    *error = "no function " + entry_name + " in " + path;
    return nullptr;
  }
  return reinterpret_cast<CpuModule::Entry>(symbol);
}

}  // namespace

std::shared_ptr<CpuModule> CpuModule::load(const std::string& source,
                                           const std::string& entry_name) {
  const std::string key =
      sha256_hex(source + "\n" + HostCompiler::get().identity() + "\n" + embedded_headers_hash());
  bool from_memory = false;
  std::shared_ptr<CpuModule> module = modules.get(
      key + "/" + entry_name, [&] { return load_or_build(key, source, entry_name); }, &from_memory);
  if (from_memory) log(LogLevel::Debug, "cpu module " + key.substr(0, 16) + ": from memory");
  return module;
}

void* CpuModule::symbol(const std::string& name) const { return dlsym(handle_, name.c_str()); }

void CpuModule::clear_memory_cache() { modules.clear(); }

std::shared_ptr<CpuModule> CpuModule::load_or_build(const std::string& key,
                                                    const std::string& source,
                                                    const std::string& entry_name) {
  const std::string name = "cpu module " + key.substr(0, 16);
  const std::string dir = cache_subdir("cpu");
  const std::string library = dir + "/" + key + ".so";
  // dlopen only a private library whose bytes match their hash, and through the descriptor they
  // were read from: loading a damaged one can crash, and another user's runs their code.
  const auto from_disk = [&]() -> std::shared_ptr<CpuModule> {
    StageTimer timer(name + ": read disk cache");
    std::optional<VerifiedFile> cached = open_verified(library);
    if (!cached) return nullptr;
    std::string error;
    void* handle = nullptr;
    if (Entry entry = open_library(cached->file.get(), cached->status, library, entry_name, &error, &handle)) {
      log(LogLevel::Debug, name + ": from disk " + library);
      return std::shared_ptr<CpuModule>(new CpuModule(handle, entry, library, true));
    }
    log(LogLevel::Warning, "cached library " + library + " does not load (" + error + "); rebuilding it");
    return nullptr;
  };
  if (std::shared_ptr<CpuModule> cached = from_disk()) return cached;
  const BuildLock lock(library);
  if (std::shared_ptr<CpuModule> cached = from_disk()) return cached;  // built by the lock's holder

  StageTimer timer(name + ": build");
  const std::string headers_dir = write_embedded_headers();
  const std::string include_dir = precompiled_include_dir(headers_dir);
  const std::string source_path = dir + "/" + key + ".cc";  // kept for debugging
  write_atomically(source_path, source);
  const std::string built = unique_temp_path(library);
  UniqueFd file;
  struct stat status {};
  std::optional<std::string> bytes;
  try {
    try {
      HostCompiler::get().compile(source_path, built, {include_dir});
    } catch (const std::runtime_error&) {
      // A damaged precompiled header must not fail a build the plain header allows.
      if (include_dir == headers_dir) throw;
      HostCompiler::get().compile(source_path, built, {headers_dir});
    }
    // The linker's mode follows the umask; the library is loaded from this very file.
    std::filesystem::permissions(
        built, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    file = open_private_file(built, &status);
    if (file) bytes = read_all(file.get());
  } catch (...) {
    std::remove(built.c_str());
    throw;
  }
  std::remove(built.c_str());
  if (!bytes) throw std::runtime_error("cannot read the library the compiler wrote: " + built);
  store_verified(library, *bytes);
  std::string error;
  void* handle = nullptr;
  Entry entry = open_library(file.get(), status, library, entry_name, &error, &handle);
  if (entry == nullptr) throw std::runtime_error("cannot load " + library + ": " + error);
  log(LogLevel::Debug, name + ": built " + library);
  return std::shared_ptr<CpuModule>(new CpuModule(handle, entry, library, false));
}

}  // namespace tilec::runtime

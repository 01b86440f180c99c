#include "runtime/cpu/cpu_module.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "base/hash.h"
#include "base/log.h"
#include "runtime/cache.h"
#include "runtime/cpu/host_compiler.h"
#include "runtime/embedded_headers.h"
#include "runtime/module_cache.h"

namespace tilec::runtime {
namespace {

// Keyed by cache key and entry name.
ModuleCache<CpuModule> modules;

// Writes the device headers under <cache>/include/<their hash>/ and returns that directory.
// Each file is checked and, if missing or different, replaced atomically, so compilers in
// other processes only ever see whole headers.
std::string write_embedded_headers() {
  const std::string dir = cache_subdir("include") + "/" + embedded_headers_hash();
  for (const EmbeddedHeader& header : embedded_headers()) {
    const std::string path = dir + "/" + header.path;
    if (read_file(path) != header.text) write_atomically(path, header.text);
  }
  return dir;
}

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
  if (!std::filesystem::exists(pch)) {
    const std::string temp = unique_temp_path(pch);
    if (compiler.precompile_header(header, temp)) std::filesystem::rename(temp, pch);
    else std::filesystem::remove(temp);
  }
  return dir;
}

// The library's entry, or nullptr with `error` set.
CpuModule::Entry open_library(const std::string& path, const std::string& entry_name,
                              std::string* error, void** handle_out) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  *handle_out = handle;
  if (handle == nullptr) {
    const char* message = dlerror();
    *error = message != nullptr ? message : "dlopen failed";
    return nullptr;
  }
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
  std::string error;
  {
    StageTimer timer(name + ": read disk cache");
    // dlopen only a library whose bytes match their hash: loading a damaged one can crash.
    if (read_verified(library)) {
      void* handle = nullptr;
      if (Entry entry = open_library(library, entry_name, &error, &handle)) {
        log(LogLevel::Debug, name + ": from disk " + library);
        return std::shared_ptr<CpuModule>(new CpuModule(handle, entry, library, true));
      }
      log(LogLevel::Warning,
          "cached library " + library + " does not load (" + error + "); rebuilding it");
    }
  }

  StageTimer timer(name + ": build");
  const std::string headers_dir = write_embedded_headers();
  const std::string include_dir = precompiled_include_dir(headers_dir);
  const std::string source_path = dir + "/" + key + ".cc";  // kept for debugging
  write_atomically(source_path, source);
  const std::string built = unique_temp_path(library);
  std::optional<std::string> bytes;
  try {
    try {
      HostCompiler::get().compile(source_path, built, {include_dir});
    } catch (const std::runtime_error&) {
      // A damaged precompiled header must not fail a build the plain header allows.
      if (include_dir == headers_dir) throw;
      HostCompiler::get().compile(source_path, built, {headers_dir});
    }
    bytes = read_file(built);
  } catch (...) {
    std::remove(built.c_str());
    throw;
  }
  std::remove(built.c_str());
  if (!bytes) throw std::runtime_error("cannot read the library the compiler wrote: " + built);
  store_verified(library, *bytes);
  void* handle = nullptr;
  Entry entry = open_library(library, entry_name, &error, &handle);
  if (entry == nullptr) throw std::runtime_error("cannot load " + library + ": " + error);
  log(LogLevel::Debug, name + ": built " + library);
  return std::shared_ptr<CpuModule>(new CpuModule(handle, entry, library, false));
}

}  // namespace tilec::runtime

// A generated CPU kernel built into a shared object and loaded with dlopen, found first in
// this process's memory, then in the disk cache, else built with the host compiler.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace tilec::runtime {

class CpuModule {
 public:
  // The generated entry: extern "C" void entry(void* const*, const int64_t*, const double*).
  using Entry = void (*)(void* const* tensors, const int64_t* ints, const double* floats);

  // The module of `source` with its function `entry_name`. The cache key covers the source,
  // the host compiler's identity and the device headers. Threads loading one key share one
  // build. Throws std::runtime_error when the build fails or the entry is missing.
  static std::shared_ptr<CpuModule> load(const std::string& source, const std::string& entry_name);

  // Forgets the modules loaded so far, so the next load of each goes to the disk cache (for
  // tests). Loads in progress are kept.
  static void clear_memory_cache();

  CpuModule(const CpuModule&) = delete;
  CpuModule& operator=(const CpuModule&) = delete;

  void call(void* const* tensors, const int64_t* ints, const double* floats) const {
    entry_(tensors, ints, floats);
  }
  // Another function of the library by name, or null.
  void* symbol(const std::string& name) const;
  const std::string& library_path() const { return library_path_; }
  // True when the library came from the disk cache, false when this process built it.
  bool loaded_from_disk() const { return loaded_from_disk_; }

 private:
  CpuModule(void* handle, Entry entry, std::string library_path, bool loaded_from_disk)
      : handle_(handle),
        entry_(entry),
        library_path_(std::move(library_path)),
        loaded_from_disk_(loaded_from_disk) {}

  static std::shared_ptr<CpuModule> load_or_build(const std::string& key, const std::string& source,
                                                  const std::string& entry_name);

  // The library is never closed: OpenMP worker threads may still sit in the OpenMP runtime
  // it brought in, which dlclose could unload under them.
  void* handle_;
  Entry entry_;
  std::string library_path_;
  bool loaded_from_disk_;
};

}  // namespace tilec::runtime

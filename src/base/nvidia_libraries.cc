#include "base/nvidia_libraries.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace tilec {
namespace {

namespace fs = std::filesystem;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

std::vector<std::string> split_paths(const std::string& list) {
  std::vector<std::string> paths;
  std::stringstream stream(list);
  for (std::string path; std::getline(stream, path, ':');) {
    if (!path.empty()) paths.push_back(path);
  }
  return paths;
}

// The file this code was loaded from: libtilec.so, or an executable it is linked into.
fs::path own_file() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_file), &info) == 0 || info.dli_fname == nullptr) {
    return {};
  }
  std::error_code error;
  const fs::path path = fs::canonical(info.dli_fname, error);
  return error ? fs::path(info.dli_fname) : path;
}

}  // namespace

std::vector<std::string> wheel_dirs(const std::string& relative) {
  std::vector<std::string> dirs;
  const fs::path file = own_file();
  if (file.empty()) return dirs;
  std::error_code error;
  for (fs::path dir = file.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::is_directory(dir / relative, error)) dirs.push_back((dir / relative).string());
    if (dir == dir.root_path()) break;
  }
  return dirs;
}

void* open_nvidia_library(const std::vector<const char*>& names, const std::vector<const char*>& wheel_subdirs,
                          std::string* load_errors) {
  void* handle = nullptr;
  const auto try_open = [&](const std::string& path) {
    if (handle != nullptr) return;
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    const char* error = handle == nullptr ? dlerror() : nullptr;
    // A library that is there but does not load is worth reporting; a missing one is not.
    if (error != nullptr && std::string(error).find("No such file") == std::string::npos) {
      *load_errors += std::string("\n  ") + error;
    }
  };
  const auto try_dir = [&](const std::string& dir) {
    for (const char* name : names) try_open(dir + "/" + name);
  };
  for (const std::string& dir : split_paths(env("TILEC_NVIDIA_LIB_DIRS"))) try_dir(dir);
  for (const char* name : names) try_open(name);
  if (const std::string cuda_home = env("CUDA_HOME"); !cuda_home.empty()) try_dir(cuda_home + "/lib64");
  try_dir("/usr/local/cuda/lib64");
  for (const char* wheel : wheel_subdirs)
    for (const std::string& dir : wheel_dirs(wheel)) try_dir(dir);
  return handle;
}

}  // namespace tilec

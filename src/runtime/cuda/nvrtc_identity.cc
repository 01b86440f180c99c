#include "runtime/cuda/nvrtc_identity.h"

#include <sys/stat.h>

#include <cstdlib>
#include <sstream>

#include "runtime/cache.h"
#include "runtime/cuda/nvrtc_compiler.h"

namespace tilec::runtime {
namespace {

std::string record_path() { return cache_subdir("cuda") + "/nvrtc-identity"; }

// What picks the library (NvrtcCompiler's search), so that a record made under another
// environment does not count.
std::string environment() {
  std::string text;
  for (const char* name : {"TILEC_NVIDIA_LIB_DIRS", "LD_LIBRARY_PATH", "CUDA_HOME"}) {
    const char* value = std::getenv(name);
    text += std::string(name) + "=" + (value ? value : "") + ";";
  }
  return text;
}

// "size mtime" of a file, or "" when it is not there.
std::string file_stamp(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "";
  return std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

}  // namespace

std::optional<std::string> recorded_nvrtc_identity(const std::string& arch,
                                                   const std::vector<std::string>& extra_options) {
  std::optional<std::string> text = read_verified(record_path());
  if (!text) return std::nullopt;
  std::istringstream lines(*text);
  std::string env, library, stamp, version, include_dir;
  if (!std::getline(lines, env) || !std::getline(lines, library) || !std::getline(lines, stamp) ||
      !std::getline(lines, version) || !std::getline(lines, include_dir))
    return std::nullopt;
  if (env != environment() || stamp.empty() || stamp != file_stamp(library)) return std::nullopt;
  return NvrtcCompiler::identity_of(version, library, include_dir, arch, extra_options);
}

void record_nvrtc_identity() {
  const NvrtcCompiler* nvrtc = NvrtcCompiler::get();
  store_verified(record_path(), environment() + "\n" + nvrtc->library_path() + "\n" +
                                    file_stamp(nvrtc->library_path()) + "\n" + nvrtc->version() + "\n" +
                                    nvrtc->include_dir() + "\n");
}

}  // namespace tilec::runtime

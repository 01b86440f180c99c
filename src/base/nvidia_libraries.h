// Finding NVIDIA's shared libraries (NVRTC, NVTX) at run time, never linking them: the
// CUDA toolkit is optional when tilec is built, and found when a kernel needs it.
#pragma once

#include <string>
#include <vector>

namespace tilec {

// <dir>/<relative> for every directory above the file this code was loaded from (libtilec.so
// in site-packages/tilec, say) that has it: where NVIDIA's pip wheels put their libraries
// ("nvidia/cu13/lib") and headers.
std::vector<std::string> wheel_dirs(const std::string& relative);

// dlopen of the first of `names` found in $TILEC_NVIDIA_LIB_DIRS (a ':' list), the library
// search path, $CUDA_HOME/lib64, /usr/local/cuda/lib64, then the NVIDIA wheels' `wheel_subdirs`;
// null when none loads, *load_errors then listing the libraries that were there but failed to
// load (a missing one is no error).
void* open_nvidia_library(const std::vector<const char*>& names, const std::vector<const char*>& wheel_subdirs,
                          std::string* load_errors);

}  // namespace tilec

// NVRTC's identity for cubin cache keys without loading NVRTC when a cubin is already cached.
//
// Loading libnvrtc (dlopen of a 100 MB library) costs about 10 ms, most of a warm compile. The
// first load writes a record (<cache>/cuda/nvrtc-identity): the environment that chose the
// library, its path, size and modification time, its version and the CUDA headers' directory.
// Later processes take NVRTC's identity from the record while it still describes the library
// they would load; a miss in the cubin cache loads NVRTC and keys the new cubin by the identity
// of the NVRTC that built it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tilec::runtime {

// NvrtcCompiler::identity(arch, extra_options) as recorded by an earlier load, when the record
// still holds.
std::optional<std::string> recorded_nvrtc_identity(const std::string& arch,
                                                   const std::vector<std::string>& extra_options = {});

// Records the loaded NVRTC (NvrtcCompiler::get(), which must not be null) for later processes.
void record_nvrtc_identity();

}  // namespace tilec::runtime

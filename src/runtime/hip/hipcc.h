// hipcc, the ROCm compiler driver, run as a child process to build generated HIP C++ for one
// AMD GPU architecture: AMDGCN assembly for `--emit asm`, and code objects where hipRTC is
// missing. Needs no AMD GPU (Debian's hipcc 5.2 builds for gfx906, gfx90a and gfx940).
//
// The program is $TILEC_HIPCC when set, else the first of hipcc on PATH and
// /opt/rocm/bin/hipcc that runs.
#pragma once

#include <string>
#include <vector>

namespace tilec::runtime {

class Hipcc {
 public:
  // hipcc, found at first use; null when none runs.
  static const Hipcc* get();
  // Why get() is null ("" when it is not).
  static std::string unavailable_reason();

  const std::string& program() const { return program_; }
  // The first line of `hipcc --version` ("HIP version: 5.2.21153-0").
  const std::string& version() const { return version_; }

  // The options of a device-only build for `arch`, before the output and input.
  std::vector<std::string> options(const std::string& arch) const;

  // The AMDGCN assembly of `source` (including "hip/tilec_hip.h") for `arch` ("gfx90a").
  // Throws std::runtime_error holding the command and hipcc's first 40 lines of output.
  std::string assembly(const std::string& source, const std::string& arch) const;
  // The same, as a code object (an ELF for hipModuleLoadData).
  std::string code_object(const std::string& source, const std::string& arch) const;

 private:
  friend class HipccFinder;
  std::string build(const std::string& source, const std::string& arch, bool assembly) const;

  std::string program_;
  std::string version_;
};

}  // namespace tilec::runtime

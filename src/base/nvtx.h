// Opt-in NVTX ranges for Nsight Systems and other profilers: with $TILEC_NVTX on (env_switch's
// values) or set_nvtx(true), a range over each kernel launch, named after the kernel, and over
// each compile stage, as StageTimer names it. NVTX's functions come from libnvtx3interop (the
// CUDA 13 toolkit and NVIDIA's cu13 pip wheels have it), loaded when ranges are first asked
// for; where it can't be, they stay off and a warning says why, once. Off, a range costs one
// atomic load.
#pragma once

#include <string>

namespace tilec {

// Turns the ranges on or off for the whole process, over $TILEC_NVTX.
void set_nvtx(bool on);
// Whether ranges are being emitted ($TILEC_NVTX or set_nvtx, and the library loaded).
bool nvtx_on();
// Why ranges asked for are not emitted ("" when they are, or were not asked for).
std::string nvtx_unavailable_reason();

class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name);
  ~NvtxRange();
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

 private:
  bool pushed_ = false;
};

}  // namespace tilec

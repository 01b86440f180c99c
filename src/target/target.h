// The machine a kernel is compiled for, as data: its name and arch, how many threads run
// in lock step (warp or wave), how much shared memory a block may use, and which special
// instructions it has. Parsed once from the caller's (target, arch) strings by
// parse_target and handed to every pass in PassContext; nothing past that compares the
// strings. A new target or arch is a row of the table in target.cc.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

namespace tilec {

enum class TargetKind : uint8_t { Cpu, Cuda, Hip };

// Instructions a target may have beyond plain arithmetic and loads/stores.
enum class TargetFeature : uint8_t {
  MmaF16,      // mma.sync m16n8k16, f16/bf16 operands, f32 accumulators
  MmaTf32,     // mma.sync m16n8k8, tf32 operands (float32 tensors), f32 accumulators
  MmaInt8,     // mma.sync m16n8k32, s8/u8 operands, s32 accumulators
  MmaFp8,      // mma.sync m16n8k32, e4m3/e5m2 operands, f32 accumulators (sm_89 on)
  CpAsync,     // cp.async: global to shared without registers (sm_80 on)
  Ldmatrix,    // ldmatrix: shared to mma operand registers
  Stmatrix,    // stmatrix: mma accumulator registers to shared (sm_90 on)
  Tma,         // cp.async.bulk.tensor with tensor maps and mbarrier transaction counts (sm_90 on)
  Wgmma,       // wgmma.mma_async, warpgroup tensor-core ops (sm_90a only)
  Setmaxnreg,  // setmaxnreg: registers moved between warpgroups (sm_90a only)
  Mfma,        // AMD matrix cores, __builtin_amdgcn_mfma_* (gfx90a, gfx940)
};

// The printed name of `f` ("mma.f16", "cp.async", "wgmma", ...).
const char* feature_name(TargetFeature f);

// A set of TargetFeature.
class TargetFeatures {
 public:
  constexpr TargetFeatures() = default;
  constexpr TargetFeatures(std::initializer_list<TargetFeature> features) {
    for (TargetFeature f : features) bits_ |= bit(f);
  }
  constexpr bool has(TargetFeature f) const { return (bits_ & bit(f)) != 0; }
  constexpr bool has_all(TargetFeatures s) const { return (bits_ & s.bits_) == s.bits_; }
  constexpr TargetFeatures with(TargetFeatures more) const {
    TargetFeatures r = *this;
    r.bits_ |= more.bits_;
    return r;
  }
  constexpr bool operator==(const TargetFeatures&) const = default;
  // The names of the features in the set, in TargetFeature order, separated by spaces.
  std::string to_string() const;

 private:
  static constexpr uint32_t bit(TargetFeature f) { return uint32_t{1} << static_cast<unsigned>(f); }
  uint32_t bits_ = 0;
};

struct Target {
  TargetKind kind = TargetKind::Cpu;
  std::string name = "cpu";  // "cpu", "cuda", "hip"
  // "sm_90a", "gfx90a", ...; "" on the CPU, and on cuda when the arch is not known (source
  // is emitted for no particular GPU: the sm_80 instruction set with fp8 mma, no Hopper
  // machinery, and the largest shared memory of any arch, so no tile is refused that one
  // arch could run).
  std::string arch;
  // Threads that run in lock step and exchange registers by shuffles: a warp (32) on
  // cuda, a wave (64) on hip; 1 on the CPU, which runs a block's threads as one loop.
  int warp_size = 1;
  // The most shared memory (dynamic, in bytes) one block may use; 0 on the CPU, where
  // shared buffers are block-local arrays with no limit of their own.
  int64_t max_shared_bytes = 0;
  TargetFeatures features;

  bool has(TargetFeature f) const { return features.has(f); }
  bool is_cpu() const { return kind == TargetKind::Cpu; }
  bool is_cuda() const { return kind == TargetKind::Cuda; }
  bool is_hip() const { return kind == TargetKind::Hip; }
  bool operator==(const Target&) const = default;

  // One line: "cuda sm_90a (warp 32, smem 227 KiB, mma.f16 ... wgmma setmaxnreg)".
  std::string to_string() const;
};

// The Target named `name` ("cpu", "cuda", "hip") with arch `arch` ("" for cpu; for cuda
// "" is an arch not known). An unknown name or arch, an arch given to a target that takes
// none, or none given to one that needs it, is a std::invalid_argument that lists the valid
// names or arches.
Target parse_target(const std::string& name, const std::string& arch);

}  // namespace tilec

#include "target/target.h"

#include <iterator>
#include <stdexcept>

namespace tilec {
namespace {

using F = TargetFeature;

struct TargetRow {
  TargetKind kind;
  const char* name;
  int warp_size;
};

constexpr TargetRow kTargets[] = {
    {TargetKind::Cpu, "cpu", 1},
    {TargetKind::Cuda, "cuda", 32},
    {TargetKind::Hip, "hip", 64},
};

constexpr TargetFeatures kSm80 = {F::MmaF16, F::MmaTf32, F::MmaInt8, F::CpAsync, F::Ldmatrix};
constexpr TargetFeatures kSm89 = kSm80.with({F::MmaFp8});
constexpr TargetFeatures kSm90 = kSm89.with({F::Stmatrix, F::Tma});
constexpr TargetFeatures kSm90a = kSm90.with({F::Wgmma, F::Setmaxnreg});

struct ArchRow {
  TargetKind kind;
  const char* arch;  // "": the target without an arch (cpu; cuda's arch not known)
  int64_t shared_kib;
  TargetFeatures features;
};

// Shared memory: the most one block may opt in to (CUDA C Programming Guide, "Technical
// Specifications per Compute Capability"; LDS a workgroup on AMD's CDNA and Vega).
constexpr ArchRow kArches[] = {
    {TargetKind::Cpu, "", 0, {}},
    {TargetKind::Cuda, "", 227, kSm89},
    {TargetKind::Cuda, "sm_80", 163, kSm80},
    {TargetKind::Cuda, "sm_86", 99, kSm80},
    {TargetKind::Cuda, "sm_89", 99, kSm89},
    {TargetKind::Cuda, "sm_90", 227, kSm90},
    {TargetKind::Cuda, "sm_90a", 227, kSm90a},
    {TargetKind::Hip, "gfx90a", 64, {F::Mfma}},
    {TargetKind::Hip, "gfx940", 64, {F::Mfma}},
    {TargetKind::Hip, "gfx906", 64, {}},
};

constexpr const char* kFeatureNames[] = {"mma.f16",  "mma.tf32", "mma.int8", "mma.fp8", "cp.async",  "ldmatrix",
                                         "stmatrix", "tma",      "wgmma",    "setmaxnreg", "mfma"};
static_assert(std::size(kFeatureNames) == static_cast<size_t>(F::Mfma) + 1);

const TargetRow* target_named(const std::string& name) {
  for (const TargetRow& t : kTargets)
    if (name == t.name) return &t;
  return nullptr;
}

const ArchRow* arch_row(const std::string& arch) {
  for (const ArchRow& a : kArches)
    if (!arch.empty() && arch == a.arch) return &a;
  return nullptr;
}

const char* kind_name(TargetKind kind) {
  for (const TargetRow& t : kTargets)
    if (t.kind == kind) return t.name;
  throw std::logic_error("kind_name: a TargetKind without a row");
}

std::string target_names() {
  std::string names;
  for (const TargetRow& t : kTargets) names += (names.empty() ? "" : ", ") + std::string(t.name);
  return names;
}

std::string arch_names(TargetKind kind) {
  std::string names;
  for (const ArchRow& a : kArches)
    if (a.kind == kind && *a.arch) names += (names.empty() ? "" : ", ") + std::string(a.arch);
  return names;
}

bool takes_no_arch(TargetKind kind) {
  for (const ArchRow& a : kArches)
    if (a.kind == kind && *a.arch) return false;
  return true;
}

}  // namespace

const char* feature_name(TargetFeature f) { return kFeatureNames[static_cast<size_t>(f)]; }

std::string TargetFeatures::to_string() const {
  std::string names;
  for (size_t i = 0; i < std::size(kFeatureNames); ++i)
    if (has(static_cast<TargetFeature>(i))) names += (names.empty() ? "" : " ") + std::string(kFeatureNames[i]);
  return names;
}

std::string Target::to_string() const {
  std::string text = name + (arch.empty() ? is_cuda() ? ", arch not known" : "" : " " + arch);
  const bool amd = is_hip();
  text += std::string(" (") + (amd ? "wave " : "warp ") + std::to_string(warp_size);
  if (max_shared_bytes > 0) text += (amd ? ", lds " : ", smem ") + std::to_string(max_shared_bytes / 1024) + " KiB";
  std::string names = features.to_string();
  if (!names.empty()) text += ", " + names;
  return text + ")";
}

Target parse_target(const std::string& name, const std::string& arch) {
  const TargetRow* t = target_named(name);
  if (!t) throw std::invalid_argument("unknown target '" + name + "' (targets: " + target_names() + ")");
  const ArchRow* a = arch_row(arch);
  if (a && a->kind != t->kind)
    throw std::invalid_argument("arch '" + arch + "' is for target '" + kind_name(a->kind) + "', not '" + name + "'");
  if (!arch.empty() && !a) {
    if (takes_no_arch(t->kind)) throw std::invalid_argument("target '" + name + "' takes no arch, not '" + arch + "'");
    throw std::invalid_argument("unknown arch '" + arch + "' for target '" + name + "' (" + name +
                                " arches: " + arch_names(t->kind) + ")");
  }
  if (arch.empty()) {
    for (const ArchRow& row : kArches)
      if (row.kind == t->kind && !*row.arch) a = &row;
    if (!a)
      throw std::invalid_argument("target '" + name + "' needs an arch (" + name + " arches: " +
                                  arch_names(t->kind) + ")");
  }
  Target target;
  target.kind = t->kind;
  target.name = t->name;
  target.arch = arch;
  target.warp_size = t->warp_size;
  target.max_shared_bytes = a->shared_kib * 1024;
  target.features = a->features;
  return target;
}

}  // namespace tilec

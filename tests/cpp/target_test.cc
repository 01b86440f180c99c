#include "target/target.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace tilec {
namespace {

using F = TargetFeature;

std::string parse_error(const std::string& name, const std::string& arch) {
  try {
    parse_target(name, arch);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(ParseTarget, Cpu) {
  Target t = parse_target("cpu", "");
  EXPECT_TRUE(t.is_cpu());
  EXPECT_EQ(t.name, "cpu");
  EXPECT_EQ(t.arch, "");
  EXPECT_EQ(t.warp_size, 1);
  EXPECT_EQ(t.max_shared_bytes, 0);
  EXPECT_EQ(t.features, TargetFeatures{});
  EXPECT_EQ(t, Target{});  // a default Target is the CPU
}

TEST(ParseTarget, CudaArches) {
  for (const char* arch : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}) {
    Target t = parse_target("cuda", arch);
    EXPECT_TRUE(t.is_cuda()) << arch;
    EXPECT_EQ(t.name, "cuda");
    EXPECT_EQ(t.arch, arch);
    EXPECT_EQ(t.warp_size, 32) << arch;
    for (F f : {F::MmaF16, F::MmaTf32, F::MmaInt8, F::CpAsync, F::Ldmatrix}) EXPECT_TRUE(t.has(f)) << arch;
    EXPECT_FALSE(t.has(F::Mfma)) << arch;
  }
}

TEST(ParseTarget, HipArches) {
  for (const char* arch : {"gfx90a", "gfx940", "gfx906"}) {
    Target t = parse_target("hip", arch);
    EXPECT_TRUE(t.is_hip()) << arch;
    EXPECT_EQ(t.arch, arch);
    EXPECT_EQ(t.warp_size, 64) << arch;
    EXPECT_EQ(t.max_shared_bytes, 64 * 1024) << arch;
    for (F f : {F::MmaF16, F::CpAsync, F::Ldmatrix, F::Tma, F::Wgmma}) EXPECT_FALSE(t.has(f)) << arch;
  }
}

TEST(TargetFeatures, PerArch) {
  auto has = [](const char* arch, F f) { return parse_target("cuda", arch).has(f); };
  // fp8 mma.sync from sm_89 on.
  EXPECT_FALSE(has("sm_80", F::MmaFp8));
  EXPECT_FALSE(has("sm_86", F::MmaFp8));
  EXPECT_TRUE(has("sm_89", F::MmaFp8));
  EXPECT_TRUE(has("sm_90a", F::MmaFp8));
  // TMA and stmatrix from sm_90 on; wgmma and setmaxnreg on sm_90a only.
  for (F f : {F::Tma, F::Stmatrix}) {
    EXPECT_FALSE(has("sm_89", f));
    EXPECT_TRUE(has("sm_90", f));
    EXPECT_TRUE(has("sm_90a", f));
  }
  for (F f : {F::Wgmma, F::Setmaxnreg}) {
    EXPECT_FALSE(has("sm_89", f));
    EXPECT_FALSE(has("sm_90", f));
    EXPECT_TRUE(has("sm_90a", f));
  }
  // MFMA on CDNA (gfx90a, gfx940), not on Vega20 (gfx906).
  EXPECT_TRUE(parse_target("hip", "gfx90a").has(F::Mfma));
  EXPECT_TRUE(parse_target("hip", "gfx940").has(F::Mfma));
  EXPECT_FALSE(parse_target("hip", "gfx906").has(F::Mfma));
}

TEST(TargetFeatures, CudaWithoutArchIsSm89WithTheLargestSharedMemory) {
  Target t = parse_target("cuda", "");
  EXPECT_TRUE(t.is_cuda());
  EXPECT_EQ(t.arch, "");
  EXPECT_EQ(t.features, parse_target("cuda", "sm_89").features);
  EXPECT_EQ(t.max_shared_bytes, parse_target("cuda", "sm_90a").max_shared_bytes);
}

TEST(TargetSharedMemory, PerArch) {
  EXPECT_EQ(parse_target("cuda", "sm_80").max_shared_bytes, 163 * 1024);
  EXPECT_EQ(parse_target("cuda", "sm_86").max_shared_bytes, 99 * 1024);
  EXPECT_EQ(parse_target("cuda", "sm_89").max_shared_bytes, 99 * 1024);
  EXPECT_EQ(parse_target("cuda", "sm_90").max_shared_bytes, 227 * 1024);
  EXPECT_EQ(parse_target("cuda", "sm_90a").max_shared_bytes, 227 * 1024);
}

TEST(TargetToString, IsCompact) {
  EXPECT_EQ(parse_target("cpu", "").to_string(), "cpu (warp 1)");
  EXPECT_EQ(parse_target("cuda", "sm_80").to_string(),
            "cuda sm_80 (warp 32, smem 163 KiB, mma.f16 mma.tf32 mma.int8 cp.async ldmatrix)");
  EXPECT_EQ(parse_target("cuda", "sm_90a").to_string(),
            "cuda sm_90a (warp 32, smem 227 KiB, mma.f16 mma.tf32 mma.int8 mma.fp8 cp.async ldmatrix stmatrix tma "
            "wgmma setmaxnreg)");
  EXPECT_EQ(parse_target("cuda", "").to_string(),
            "cuda, arch not known (warp 32, smem 227 KiB, mma.f16 mma.tf32 mma.int8 mma.fp8 cp.async ldmatrix)");
  EXPECT_EQ(parse_target("hip", "gfx90a").to_string(), "hip gfx90a (wave 64, lds 64 KiB, mfma)");
  EXPECT_EQ(parse_target("hip", "gfx906").to_string(), "hip gfx906 (wave 64, lds 64 KiB)");
}

TEST(ParseTargetErrors, UnknownTargetListsTheTargets) {
  EXPECT_EQ(parse_error("gpu", ""), "unknown target 'gpu' (targets: cpu, cuda, hip)");
  EXPECT_EQ(parse_error("CUDA", "sm_80"), "unknown target 'CUDA' (targets: cpu, cuda, hip)");
}

TEST(ParseTargetErrors, UnknownArchListsTheTargetsArches) {
  EXPECT_EQ(parse_error("cuda", "sm_75"),
            "unknown arch 'sm_75' for target 'cuda' (cuda arches: sm_80, sm_86, sm_89, sm_90, sm_90a)");
  EXPECT_EQ(parse_error("hip", "gfx942"), "unknown arch 'gfx942' for target 'hip' (hip arches: gfx90a, gfx940, gfx906)");
}

TEST(ParseTargetErrors, AnArchOfAnotherTargetNamesIt) {
  EXPECT_EQ(parse_error("cpu", "sm_80"), "arch 'sm_80' is for target 'cuda', not 'cpu'");
  EXPECT_EQ(parse_error("cuda", "gfx90a"), "arch 'gfx90a' is for target 'hip', not 'cuda'");
  EXPECT_EQ(parse_error("hip", "sm_90a"), "arch 'sm_90a' is for target 'cuda', not 'hip'");
}

TEST(ParseTargetErrors, CpuTakesNoArch) {
  EXPECT_EQ(parse_error("cpu", "avx512"), "target 'cpu' takes no arch, not 'avx512'");
}

TEST(ParseTargetErrors, HipNeedsAnArch) {
  EXPECT_EQ(parse_error("hip", ""), "target 'hip' needs an arch (hip arches: gfx90a, gfx940, gfx906)");
}

TEST(TargetFeatures, SetOperations) {
  TargetFeatures s{F::Tma, F::Mfma};
  EXPECT_TRUE(s.has(F::Tma));
  EXPECT_TRUE(s.has(F::Mfma));
  EXPECT_FALSE(s.has(F::Wgmma));
  EXPECT_EQ(s.to_string(), "tma mfma");
  EXPECT_EQ(s.with({F::Wgmma}).to_string(), "tma wgmma mfma");
  EXPECT_TRUE(s.has_all({F::Mfma}));
  EXPECT_TRUE(s.has_all({}));
  EXPECT_FALSE(s.has_all({F::Tma, F::Wgmma}));
  EXPECT_EQ(TargetFeatures{}.to_string(), "");
  EXPECT_STREQ(feature_name(F::CpAsync), "cp.async");
}

}  // namespace
}  // namespace tilec

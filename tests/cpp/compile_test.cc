// compile()'s option checks (src/runtime/compile.cc), made before any source is read, and the
// Target that heads each stage emit() prints.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "tilec/tilec.h"

namespace {

std::string option_error(const tilec::CompileOptions& options) {
  try {
    tilec::check_options(options);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(CheckOptions, KnownTargetsArchsAndConfigsPass) {
  EXPECT_EQ(option_error({}), "");
  EXPECT_EQ(option_error({.target = "cuda", .arch = "sm_90a", .pass_configs = {{"tilec.wgmma", "false"}}}), "");
  EXPECT_EQ(option_error({.target = "cpu", .pass_configs = {{"tilec.bounds_check", "True"}}}), "");
}

TEST(CheckOptions, UnknownTargetIsNamed) {
  EXPECT_EQ(option_error({.target = "gpu"}), "unknown target 'gpu' (targets: cpu, cuda, hip)");
}

TEST(CheckOptions, UnknownArchListsTheArches) {
  EXPECT_EQ(option_error({.target = "cuda", .arch = "sm_75"}),
            "unknown arch 'sm_75' for target 'cuda' (cuda arches: sm_80, sm_86, sm_89, sm_90, sm_90a)");
}

TEST(CheckOptions, ArchOutsideCudaIsNamed) {
  EXPECT_EQ(option_error({.target = "cpu", .arch = "sm_80"}), "arch 'sm_80' is for target 'cuda', not 'cpu'");
}

TEST(CheckOptions, HipTakesItsOwnArchs) {
  EXPECT_EQ(option_error({.target = "hip", .arch = "gfx90a"}), "");
  EXPECT_EQ(option_error({.target = "hip", .arch = "gfx940"}), "");
  EXPECT_EQ(option_error({.target = "hip", .arch = "gfx906"}), "");
  EXPECT_EQ(option_error({.target = "hip"}), "target 'hip' needs an arch (hip arches: gfx90a, gfx940, gfx906)");
  EXPECT_EQ(option_error({.target = "hip", .arch = "gfx942"}),
            "unknown arch 'gfx942' for target 'hip' (hip arches: gfx90a, gfx940, gfx906)");
  EXPECT_EQ(option_error({.target = "hip", .arch = "sm_80"}), "arch 'sm_80' is for target 'cuda', not 'hip'");
  EXPECT_EQ(option_error({.target = "cuda", .arch = "gfx90a"}), "arch 'gfx90a' is for target 'hip', not 'cuda'");
}

TEST(CheckOptions, HipHasNoBoundsCheckedBuild) {
  EXPECT_EQ(option_error({.target = "hip", .arch = "gfx90a", .pass_configs = {{"tilec.bounds_check", "true"}}}),
            "pass config 'tilec.bounds_check' is not available on target 'hip' (use target 'cpu' to check a "
            "kernel's accesses)");
}

TEST(CheckOptions, UnknownPassConfigListsTheKnownOnes) {
  std::string what = option_error({.pass_configs = {{"tilec.fast", "1"}}});
  EXPECT_EQ(what.rfind("unknown pass config 'tilec.fast' (tilec reads: tilec.bounds_check, ", 0), 0u) << what;
}

TEST(CheckOptions, PassConfigValueIsASwitch) {
  EXPECT_EQ(option_error({.pass_configs = {{"tilec.tma", "maybe"}}}),
            "pass config 'tilec.tma' is a switch: True or False, not 'maybe'");
}

TEST(CheckOptions, EmitChecksOptionsBeforeTheSource) {
  tilec::FunctionSource nothing{"this is not python", "x.py", 1, "main", {}};
  EXPECT_THROW(tilec::emit(nothing, {.target = "gpu"}, tilec::EmitStage::Source), std::invalid_argument);
}

constexpr const char* kScale =
    "import tilec.language as T\n\n@T.prim_func\n"
    "def main(A: T.Tensor((128,), \"float32\")):\n"
    "    with T.Kernel(1, threads=128) as bx:\n"
    "        for i in T.Parallel(128):\n"
    "            A[i] = A[i] * 2.0\n";

std::string first_lines(const tilec::CompileOptions& options, tilec::EmitStage stage, int lines) {
  std::string text = tilec::emit(tilec::load_function(kScale, "k.py", "main"), options, stage);
  size_t end = 0;
  for (int i = 0; i < lines && end != std::string::npos; ++i) end = text.find('\n', end + (i > 0));
  return text.substr(0, end);
}

TEST(EmitHeader, IrStagesStartWithTheTarget) {
  EXPECT_EQ(first_lines({}, tilec::EmitStage::TileIR, 1), "# target: cpu (warp 1)");
  EXPECT_EQ(first_lines({}, tilec::EmitStage::IR, 1), "# target: cpu (warp 1)");
  EXPECT_EQ(first_lines({.target = "cuda", .arch = "sm_80"}, tilec::EmitStage::IR, 1),
            "# target: cuda sm_80 (warp 32, smem 163 KiB, mma.f16 mma.tf32 mma.int8 cp.async ldmatrix)");
  EXPECT_EQ(first_lines({.target = "cuda", .arch = "sm_90a"}, tilec::EmitStage::TileIR, 1).substr(0, 34),
            "# target: cuda sm_90a (warp 32, sm");
}

TEST(EmitHeader, SourceNamesTheTargetUnderItsFirstLine) {
  std::string cpu = first_lines({}, tilec::EmitStage::Source, 2);
  EXPECT_EQ(cpu.substr(cpu.find('\n') + 1), "// Target: cpu (warp 1)");
  std::string cuda = first_lines({.target = "cuda"}, tilec::EmitStage::Source, 2);
  EXPECT_EQ(cuda.substr(cuda.find('\n') + 1),
            "// Target: cuda, arch not known (warp 32, smem 227 KiB, mma.f16 mma.tf32 mma.int8 mma.fp8 cp.async "
            "ldmatrix)");
}

}  // namespace

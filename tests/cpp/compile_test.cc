// compile()'s option checks (src/runtime/compile.cc), made before any source is read.
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
  EXPECT_EQ(option_error({.target = "gpu"}), "target 'gpu' is not available in this build (targets: cpu, cuda)");
}

TEST(CheckOptions, ArchOutsideCudaIsNamed) {
  EXPECT_EQ(option_error({.target = "cpu", .arch = "sm_80"}), "arch 'sm_80' is for target 'cuda', not 'cpu'");
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

}  // namespace

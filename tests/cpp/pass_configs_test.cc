// normalized_pass_configs (src/runtime/pass_configs.h): tilec's switches kept, TileLang's keys
// mapped onto them or dropped with a DEBUG line, and the errors.
#include "runtime/pass_configs.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>

#include "test_support.h"

namespace tilec::runtime {
namespace {

using Configs = std::map<std::string, std::string>;

std::string error_of(const Configs& given) {
  try {
    normalized_pass_configs(given);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(PassConfigs, TilecSwitchesAreKeptAsTrueOrFalse) {
  EXPECT_EQ(normalized_pass_configs({{"tilec.tma", "False"}, {"tilec.fast_math", "1"}}),
            (Configs{{"tilec.tma", "false"}, {"tilec.fast_math", "true"}}));
}

TEST(PassConfigs, TileLangKeysBecomeTilecSwitches) {
  EXPECT_EQ(normalized_pass_configs({{"tl.disable_tma_lower", "true"}}), (Configs{{"tilec.tma", "false"}}));
  EXPECT_EQ(normalized_pass_configs({{"tl.disable_tma_lower", "false"}}), (Configs{{"tilec.tma", "true"}}));
  EXPECT_EQ(normalized_pass_configs({{"tl.disable_warp_specialized", "True"}}),
            (Configs{{"tilec.warp_specialize", "false"}}));
  EXPECT_EQ(normalized_pass_configs({{"tl.disable_wgmma", "1"}}), (Configs{{"tilec.wgmma", "false"}}));
  EXPECT_EQ(normalized_pass_configs({{"tl.enable_fast_math", "true"}}), (Configs{{"tilec.fast_math", "true"}}));
  EXPECT_EQ(normalized_pass_configs({{"tl.disable_fast_math", "true"}}), (Configs{{"tilec.fast_math", "false"}}));
}

TEST(PassConfigs, OtherTileLangKeysAreDroppedWithADebugLine) {
  Configs normalized;
  const std::string log = test_support::captured_debug_log([&] {
    normalized = normalized_pass_configs({{"tl.disable_thread_storage_sync", "true"},
                                          {"tl.ptxas_register_usage_level", "10"},
                                          {"tirx.disable_vectorize", "whatever"},
                                          {"cuda.kernels_output_dir", "/tmp/k"}});
  });
  EXPECT_TRUE(normalized.empty());
  for (const char* key : {"tl.disable_thread_storage_sync", "tl.ptxas_register_usage_level",
                          "tirx.disable_vectorize", "cuda.kernels_output_dir"})
    EXPECT_NE(log.find("pass config '" + std::string(key) + "' (TileLang's) has no effect in tilec"),
              std::string::npos)
        << log;
}

TEST(PassConfigs, AMappedKeyIsLogged) {
  const std::string log =
      test_support::captured_debug_log([] { normalized_pass_configs({{"tl.enable_fast_math", "True"}}); });
  EXPECT_NE(log.find("pass config 'tl.enable_fast_math' = True: tilec.fast_math on"), std::string::npos) << log;
}

TEST(PassConfigs, UnknownTilecKeysAndNamespacesAreErrors) {
  EXPECT_EQ(error_of({{"tilec.fast", "1"}}).rfind("unknown pass config 'tilec.fast' (tilec reads: tilec.bounds_check, ", 0),
            0u);
  EXPECT_EQ(error_of({{"fast_math", "1"}}),
            "unknown pass config 'fast_math' (tilec reads its own 'tilec.*' switches and TileLang's 'tl.*' keys)");
}

TEST(PassConfigs, SwitchValuesAreChecked) {
  EXPECT_EQ(error_of({{"tl.disable_tma_lower", "yes please"}}),
            "pass config 'tl.disable_tma_lower' is a switch: True or False, not 'yes please'");
  EXPECT_EQ(error_of({{"tilec.fast_math", "2"}}), "pass config 'tilec.fast_math' is a switch: True or False, not '2'");
}

TEST(PassConfigs, OneSwitchSetTwoWaysIsAnError) {
  EXPECT_EQ(error_of({{"tl.disable_tma_lower", "true"}, {"tilec.tma", "true"}}),
            "pass configs 'tilec.tma' and 'tl.disable_tma_lower' set 'tilec.tma' two ways");
  EXPECT_EQ(error_of({{"tl.enable_fast_math", "true"}, {"tl.disable_fast_math", "true"}}),
            "pass configs 'tl.disable_fast_math' and 'tl.enable_fast_math' set 'tilec.fast_math' two ways");
  EXPECT_EQ(normalized_pass_configs({{"tl.disable_tma_lower", "true"}, {"tilec.tma", "false"}}),
            (Configs{{"tilec.tma", "false"}}));
}

}  // namespace
}  // namespace tilec::runtime

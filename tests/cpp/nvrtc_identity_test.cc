// The recorded NVRTC identity that lets a warm compile skip loading NVRTC.
#include "runtime/cuda/nvrtc_identity.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "runtime/cuda/nvrtc_compiler.h"
#include "test_support.h"

namespace tilec::runtime {
namespace {

class NvrtcIdentityTest : public testing::Test {
 protected:
  void SetUp() override {
    if (NvrtcCompiler::get() == nullptr) GTEST_SKIP() << NvrtcCompiler::unavailable_reason();
  }
  test_support::TemporaryCacheDir cache_{"tilec_nvrtc_identity_"};
};

TEST_F(NvrtcIdentityTest, NoRecordBeforeTheFirstLoad) {
  EXPECT_FALSE(recorded_nvrtc_identity("sm_90a").has_value());
}

TEST_F(NvrtcIdentityTest, RecordGivesTheLoadedIdentityForEachArch) {
  record_nvrtc_identity();
  for (const char* arch : {"sm_80", "sm_90a"}) {
    auto identity = recorded_nvrtc_identity(arch);
    ASSERT_TRUE(identity.has_value());
    EXPECT_EQ(*identity, NvrtcCompiler::get()->identity(arch, {}));
  }
}

TEST_F(NvrtcIdentityTest, AnotherEnvironmentDoesNotUseTheRecord) {
  record_nvrtc_identity();
  const char* saved = std::getenv("TILEC_NVIDIA_LIB_DIRS");
  std::string old = saved ? saved : "";
  setenv("TILEC_NVIDIA_LIB_DIRS", "/nonexistent/lib", 1);
  EXPECT_FALSE(recorded_nvrtc_identity("sm_90a").has_value());
  if (saved) setenv("TILEC_NVIDIA_LIB_DIRS", old.c_str(), 1);
  else unsetenv("TILEC_NVIDIA_LIB_DIRS");
  EXPECT_TRUE(recorded_nvrtc_identity("sm_90a").has_value());
}

TEST_F(NvrtcIdentityTest, DamagedRecordIsIgnored) {
  record_nvrtc_identity();
  std::ofstream(cache_.path() + "/cuda/nvrtc-identity", std::ios::app) << "x";
  EXPECT_FALSE(recorded_nvrtc_identity("sm_90a").has_value());
}

}  // namespace
}  // namespace tilec::runtime

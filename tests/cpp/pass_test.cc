// What passes see of the target: hopper_feature asks PassContext's Target, and the pass
// configs switch its features off.
#include "passes/pass.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace tilec::passes {
namespace {

constexpr const char* kHopperFeatures[] = {"tilec.wgmma",    "tilec.tma",       "tilec.warp_specialize",
                                           "tilec.setmaxnreg", "tilec.tma_store", "tilec.persistent"};

PassContext context(const std::string& name, const std::string& arch, std::map<std::string, std::string> configs = {}) {
  PassContext ctx;
  ctx.target = parse_target(name, arch);
  ctx.pass_configs = std::move(configs);
  return ctx;
}

TEST(HopperFeature, AllOnForSm90a) {
  PassContext ctx = context("cuda", "sm_90a");
  for (const char* f : kHopperFeatures) EXPECT_TRUE(hopper_feature(ctx, f)) << f;
}

TEST(HopperFeature, AllOffWithoutWgmma) {
  // sm_90 has TMA but not wgmma, which every other feature builds on.
  for (const PassContext& ctx : {context("cuda", "sm_90"), context("cuda", "sm_89"), context("cuda", "sm_80"),
                                 context("cuda", ""), context("cpu", ""), context("hip", "gfx90a")})
    for (const char* f : kHopperFeatures) EXPECT_FALSE(hopper_feature(ctx, f)) << ctx.target.to_string() << " " << f;
}

TEST(HopperFeature, ConfigsSwitchThemOffWithWhatBuildsOnThem) {
  PassContext no_tma = context("cuda", "sm_90a", {{"tilec.tma", "false"}});
  EXPECT_TRUE(hopper_feature(no_tma, "tilec.wgmma"));
  for (const char* f : {"tilec.tma", "tilec.warp_specialize", "tilec.setmaxnreg", "tilec.tma_store",
                        "tilec.persistent"})
    EXPECT_FALSE(hopper_feature(no_tma, f)) << f;
  PassContext no_setmaxnreg = context("cuda", "sm_90a", {{"tilec.setmaxnreg", "0"}});
  EXPECT_FALSE(hopper_feature(no_setmaxnreg, "tilec.setmaxnreg"));
  EXPECT_TRUE(hopper_feature(no_setmaxnreg, "tilec.persistent"));
}

TEST(HopperFeature, EachNeedsTheInstructionsItUses) {
  // A made-up target with wgmma and TMA only: no register reallocation, and no TMA-store
  // epilogue, which writes the accumulator to shared memory with stmatrix.
  PassContext ctx = context("cuda", "sm_90a");
  ctx.target.features = TargetFeatures{TargetFeature::Wgmma, TargetFeature::Tma};
  EXPECT_TRUE(hopper_feature(ctx, "tilec.warp_specialize"));
  EXPECT_TRUE(hopper_feature(ctx, "tilec.persistent"));
  EXPECT_FALSE(hopper_feature(ctx, "tilec.setmaxnreg"));
  EXPECT_FALSE(hopper_feature(ctx, "tilec.tma_store"));
  ctx.target.features = ctx.target.features.with({TargetFeature::Stmatrix});
  EXPECT_TRUE(hopper_feature(ctx, "tilec.tma_store"));
}

TEST(HopperFeature, AnUnknownNameIsAnInternalError) {
  EXPECT_THROW(hopper_feature(context("cuda", "sm_90a"), "tilec.wmma"), std::logic_error);
}

}  // namespace
}  // namespace tilec::passes

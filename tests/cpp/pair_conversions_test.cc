// pair_conversions, IR before and after: a vector group's element loop over pairs where the
// run's store converts from float32 and its FP8 reads sit at even offsets of a local run.
#include "passes/gpu/pair_conversions.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/intrinsics.h"
#include "ir/printer.h"

namespace tilec::passes {
namespace {

using ir::Expr;

ir::Buffer local(const std::string& name, DType dtype, int64_t n) {
  return ir::make_buffer(name, dtype, {ir::make_int(n)}, {}, ir::MemoryScope::Local);
}

// run[u] = cast(store_dtype, float(e4m3(raw[offset + u])) * s)
ir::Stmt dequantize(DType store_dtype, int64_t offset, const Expr& u) {
  Expr raw_value = ir::make_load(local("raw", DType::UInt8, 32), {ir::make_Add(ir::make_int(offset), u)});
  Expr fp8 = ir::make_call(DType::Float8E4M3, std::string(ir::kReinterpret), {raw_value});
  Expr value = ir::make_Mul(ir::make_cast(DType::Float32, fp8), ir::make_var("s", DType::Float32));
  return ir::make_store(local("run", store_dtype, 8), {u}, ir::make_cast(store_dtype, value));
}

TEST(PairConversions, FloatsToBfloat16AndFp8ToFloatTwoAtATime) {
  Expr u = ir::make_var("u");
  std::vector<ir::Buffer> locals;
  ir::Stmt pairs = pair_conversions(dequantize(DType::BFloat16, 8, u), u, 8, locals);
  ASSERT_TRUE(pairs);
  EXPECT_EQ(ir::to_string(pairs),
            "for p in T.unroll(4):\n"
            "    T.evaluate(T.device.e4m3_pair_to_float(T.address_of(raw_pair[0]), T.address_of(raw[p * 2 + 8])))\n"
            "    T.evaluate(T.device.from_float_pair(T.address_of(run[p * 2]), raw_pair[0] * s, raw_pair[1] * s))\n");
  ASSERT_EQ(locals.size(), 1u);
  EXPECT_EQ(locals[0]->name, "raw_pair");
}

TEST(PairConversions, AnOddOffsetKeepsItsFp8ReadsOneByOne) {
  Expr u = ir::make_var("u");
  std::vector<ir::Buffer> locals;
  ir::Stmt pairs = pair_conversions(dequantize(DType::Float16, 7, u), u, 8, locals);
  ASSERT_TRUE(pairs);
  const std::string text = ir::to_string(pairs);
  EXPECT_EQ(text.find("e4m3_pair_to_float"), std::string::npos) << text;
  EXPECT_NE(text.find("from_float_pair"), std::string::npos) << text;
  EXPECT_TRUE(locals.empty());
}

TEST(PairConversions, NothingForOtherStores) {
  Expr u = ir::make_var("u");
  std::vector<ir::Buffer> locals;
  // a float32 run, an FP8 run (its rounding has rules of its own), an odd width
  ir::Stmt to_float = ir::make_store(local("run", DType::Float32, 8), {u}, ir::make_cast(DType::Float32, u));
  EXPECT_FALSE(pair_conversions(to_float, u, 8, locals));
  EXPECT_FALSE(pair_conversions(dequantize(DType::Float8E4M3, 8, u), u, 8, locals));
  EXPECT_FALSE(pair_conversions(dequantize(DType::BFloat16, 8, u), u, 1, locals));
}

}  // namespace
}  // namespace tilec::passes

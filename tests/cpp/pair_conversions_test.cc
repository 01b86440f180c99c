// pair_conversions, IR before and after: a vector group's element loop over pairs where the
// run's store converts from float32 and its FP8 reads sit at even offsets of a local run; and
// pair_max_conversions: a slot loop's ReLU into a 16-bit fragment (a max, or a select that keeps
// NaN) over pairs of slots.
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

// run[u] = cast(store_dtype, float(e4m3(raw[offset + u])) * scale), by default a float32 s
ir::Stmt dequantize(DType store_dtype, int64_t offset, const Expr& u, Expr scale = ir::make_var("s", DType::Float32)) {
  Expr raw_value = ir::make_load(local("raw", DType::UInt8, 32), {ir::make_Add(ir::make_int(offset), u)});
  Expr fp8 = ir::make_call(DType::Float8E4M3, std::string(ir::kReinterpret), {raw_value});
  Expr value = ir::make_Mul(ir::make_cast(DType::Float32, fp8), scale);
  return ir::make_store(local("run", store_dtype, 8), {u}, ir::make_cast(store_dtype, value));
}

// float(scales[g]), a bfloat16 scale
Expr bfloat16_scale(const Expr& g) {
  return ir::make_cast(DType::Float32, ir::make_load(local("scales", DType::BFloat16, 4), {g}));
}

TEST(PairConversions, Fp8TimesABfloat16ScaleGoesFourAtATime) {
  Expr u = ir::make_var("u");
  std::vector<ir::Buffer> locals;
  ir::Stmt quads = pair_conversions(dequantize(DType::BFloat16, 8, u, bfloat16_scale(ir::make_int(1))), u, 8, locals,
                                    true);
  ASSERT_TRUE(quads);
  EXPECT_EQ(ir::to_string(quads),
            "for q in T.unroll(2):\n"
            "    T.evaluate(T.device.e4m3_quad_times(T.address_of(run[q * 4]), T.address_of(raw[q * 4 + 8]), scales[1]))\n");
  EXPECT_TRUE(locals.empty());
}

TEST(PairConversions, Fp8TimesAScaleStaysInPairsOffCudaOrWhereTheScaleOrQuadsDoNotAllow) {
  Expr u = ir::make_var("u");
  std::vector<ir::Buffer> locals;
  auto quads = [&](ir::Stmt element, int64_t width, bool cuda) {
    return ir::to_string(pair_conversions(element, u, width, locals, cuda)).find("e4m3_quad_times") != std::string::npos;
  };
  EXPECT_FALSE(quads(dequantize(DType::BFloat16, 8, u, bfloat16_scale(ir::make_int(1))), 8, false));  // HIP
  EXPECT_FALSE(quads(dequantize(DType::BFloat16, 8, u), 8, true));  // a float32 scale: rounded once, not twice
  EXPECT_FALSE(quads(dequantize(DType::BFloat16, 8, u, bfloat16_scale(u)), 8, true));  // a scale an element
  EXPECT_FALSE(quads(dequantize(DType::BFloat16, 6, u, bfloat16_scale(ir::make_int(1))), 8, true));  // 2-byte aligned
  EXPECT_FALSE(quads(dequantize(DType::BFloat16, 8, u, bfloat16_scale(ir::make_int(1))), 6, true));  // 6 a group
  EXPECT_FALSE(quads(dequantize(DType::Float16, 8, u, bfloat16_scale(ir::make_int(1))), 8, true));  // into half
}

TEST(PairConversions, FloatsToBfloat16AndFp8ToFloatTwoAtATime) {
  Expr u = ir::make_var("u");
  std::vector<ir::Buffer> locals;
  ir::Stmt pairs = pair_conversions(dequantize(DType::BFloat16, 8, u), u, 8, locals, true);
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
  ir::Stmt pairs = pair_conversions(dequantize(DType::Float16, 7, u), u, 8, locals, true);
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
  EXPECT_FALSE(pair_conversions(to_float, u, 8, locals, true));
  EXPECT_FALSE(pair_conversions(dequantize(DType::Float8E4M3, 8, u), u, 8, locals, true));
  EXPECT_FALSE(pair_conversions(dequantize(DType::BFloat16, 8, u), u, 1, locals, true));
}

// relu[i(s)] = cast(dtype, max(scores[i(s)], floor)), i(s) the layout's index of slot s: its
// digits, s % 2 + s // 2 % 2 * 2 + s // 4 * 4 (the slot itself), or with its two lowest digits
// swapped (slot 1 stores element 2: no pairs).
ir::Stmt slot_relu(DType dtype, const Expr& s, bool swapped, const Expr& floor) {
  Expr low = ir::make_FloorMod(s, ir::make_int(2));
  Expr next = ir::make_FloorMod(ir::make_FloorDiv(s, ir::make_int(2)), ir::make_int(2));
  Expr index = swapped ? ir::make_Add(ir::make_Mul(low, ir::make_int(2)), next)
                       : ir::make_Add(low, ir::make_Mul(next, ir::make_int(2)));
  index = ir::make_Add(index, ir::make_Mul(ir::make_FloorDiv(s, ir::make_int(4)), ir::make_int(4)));
  Expr score = ir::make_load(local("scores", DType::Float32, 16), {index});
  return ir::make_store(local("relu", dtype, 16), {index}, ir::make_cast(dtype, ir::make_Max(score, floor)));
}

TEST(PairMaxConversions, AReluIntoBfloat16TwoSlotsAtATime) {
  Expr s = ir::make_var("s");
  const Expr zero = ir::make_float(0.0, DType::Float32);
  ir::Stmt pairs = pair_max_conversions(slot_relu(DType::BFloat16, s, false, zero), s, 16);
  ASSERT_TRUE(pairs);
  const std::string text = ir::to_string(pairs);
  EXPECT_EQ(text.rfind("for p in T.unroll(8):\n    T.evaluate(T.device.from_float_pair_max(T.address_of(relu[", 0), 0u)
      << text;
  EXPECT_NE(text.find("0.0))"), std::string::npos) << text;  // the floor, once a pair
  EXPECT_EQ(text.find("T.max("), std::string::npos) << text;
}

// relu[s] = cast(dtype, scores[s] < 0 ? 0 : scores[s]): a ReLU that keeps NaN
ir::Stmt slot_select_relu(DType dtype, const Expr& s, const Expr& bound) {
  Expr score = ir::make_load(local("scores", DType::Float32, 16), {s});
  Expr zero = ir::make_float(0.0, DType::Float32);
  return ir::make_store(local("relu", dtype, 16), {s},
                        ir::make_cast(dtype, ir::make_select(ir::make_LT(score, bound), zero, score)));
}

TEST(PairMaxConversions, AReluThatKeepsNanIsOneClampingConversionOfAPair) {
  Expr s = ir::make_var("s");
  const Expr zero = ir::make_float(0.0, DType::Float32);
  ir::Stmt pairs = pair_max_conversions(slot_select_relu(DType::Float16, s, zero), s, 16);
  ASSERT_TRUE(pairs);
  EXPECT_EQ(ir::to_string(pairs),
            "for p in T.unroll(8):\n"
            "    T.evaluate(T.device.from_float_pair_relu(T.address_of(relu[p * 2]), scores[p * 2], "
            "scores[p * 2 + 1]))\n");
  // x < 1 ? 0 : x is no ReLU
  EXPECT_FALSE(pair_max_conversions(slot_select_relu(DType::Float16, s, ir::make_float(1.0, DType::Float32)), s, 16));
}

TEST(PairMaxConversions, NothingWhereSlotsAreNoPairsOrTheStoreIsNoMax) {
  Expr s = ir::make_var("s");
  const Expr zero = ir::make_float(0.0, DType::Float32);
  EXPECT_FALSE(pair_max_conversions(slot_relu(DType::BFloat16, s, true, zero), s, 16));
  EXPECT_FALSE(pair_max_conversions(slot_relu(DType::Float16, s, false, zero), s, 15));
  // a floor that varies with the slot, a float32 fragment, a plain conversion
  Expr varying = ir::make_cast(DType::Float32, s);
  EXPECT_FALSE(pair_max_conversions(slot_relu(DType::BFloat16, s, false, varying), s, 16));
  EXPECT_FALSE(pair_max_conversions(slot_relu(DType::Float32, s, false, zero), s, 16));
  Expr score = ir::make_load(local("scores", DType::Float32, 16), {s});
  ir::Stmt plain = ir::make_store(local("relu", DType::BFloat16, 16), {s}, ir::make_cast(DType::BFloat16, score));
  EXPECT_FALSE(pair_max_conversions(plain, s, 16));
  // a value that reads the run it stores (slot 2p + 1 could read what slot 2p stored)
  ir::Buffer run = local("relu", DType::BFloat16, 16);
  Expr before = ir::make_FloorMod(ir::make_Add(s, ir::make_int(15)), ir::make_int(16));
  Expr neighbour = ir::make_cast(DType::Float32, ir::make_load(run, {before}));
  EXPECT_FALSE(pair_max_conversions(
      ir::make_store(run, {s}, ir::make_cast(DType::BFloat16, ir::make_Max(neighbour, zero))), s, 16));
}

}  // namespace
}  // namespace tilec::passes

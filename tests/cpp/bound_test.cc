#include "ir/bound.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <unordered_map>
#include <vector>

#include "ir/ir.h"
#include "ir/printer.h"

namespace tilec::ir {

// simplify_test.cc
std::optional<int64_t> eval_int32(const Expr& e,
                                  const std::unordered_map<const ExprNode*, int64_t>& env,
                                  bool* overflow);
Expr random_int_expr(std::mt19937& rng, const std::vector<Expr>& vars, int depth, bool wide);
Expr random_bool_expr(std::mt19937& rng, const std::vector<Expr>& vars, int depth);

namespace {

Expr i32(int64_t v) { return make_int(v); }

void expect_bound(const BoundAnalyzer& a, const Expr& e, int64_t lo, int64_t hi) {
  auto b = a.bound(e);
  ASSERT_TRUE(b) << to_string(e);
  EXPECT_EQ(b->min, lo) << to_string(e);
  EXPECT_EQ(b->max, hi) << to_string(e);
}

TEST(BoundAnalyzer, Arithmetic) {
  BoundAnalyzer a;
  Expr x = make_var("x"), y = make_var("y");
  a.bind(x, {-3, 5});
  a.bind(y, {2, 4});
  expect_bound(a, i32(7), 7, 7);
  expect_bound(a, x, -3, 5);
  expect_bound(a, make_Add(x, y), -1, 9);
  expect_bound(a, make_Sub(x, y), -7, 3);
  expect_bound(a, make_Mul(x, y), -12, 20);
  expect_bound(a, make_Mul(x, i32(-2)), -10, 6);
  expect_bound(a, make_FloorDiv(x, i32(2)), -2, 2);
  expect_bound(a, make_FloorDiv(x, y), -2, 2);
  expect_bound(a, make_Div(x, i32(2)), -1, 2);
  expect_bound(a, make_FloorMod(x, i32(4)), 0, 3);
  expect_bound(a, make_FloorMod(y, i32(8)), 2, 4);
  expect_bound(a, make_FloorMod(make_Add(y, i32(20)), i32(16)), 6, 8);  // within one period
  expect_bound(a, make_FloorMod(make_Add(y, i32(4)), i32(4)), 0, 3);    // across two
  expect_bound(a, make_FloorMod(x, y), 0, 3);
  expect_bound(a, make_FloorMod(x, i32(-4)), -3, 0);
  expect_bound(a, make_Min(x, y), -3, 4);
  expect_bound(a, make_Max(x, y), 2, 5);
  expect_bound(a, make_BitXor(y, i32(9)), 0, 15);  // no bit above 9's
  expect_bound(a, make_BitXor(x, y), -2147483647 - 1, 2147483647);  // x may be negative
  expect_bound(a, make_BitAnd(x, i32(6)), 0, 6);  // whatever x's sign
  expect_bound(a, make_BitAnd(make_var("free"), y), 0, 4);
  expect_bound(a, make_select(make_LT(x, i32(0)), y, x), -3, 5);
  expect_bound(a, make_select(make_LT(y, i32(10)), y, x), 2, 4);  // condition provable
  expect_bound(a, make_cast(DType::Int8, x), -3, 5);
  expect_bound(a, make_cast(DType::Int64, make_Mul(x, i32(1000))), -3000, 5000);
  expect_bound(a, make_LT(x, i32(6)), 1, 1);
  expect_bound(a, make_LT(x, i32(0)), 0, 1);
}

TEST(BoundAnalyzer, UnknownValuesGetTheirDtypesRange) {
  BoundAnalyzer a;
  Expr x = make_var("x"), n = make_var("n", DType::Int64), u = make_var("u", DType::UInt8);
  constexpr int64_t kMin = std::numeric_limits<int32_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  expect_bound(a, x, kMin, kMax);
  expect_bound(a, n, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
  expect_bound(a, u, 0, 255);
  expect_bound(a, make_FloorMod(x, i32(16)), 0, 15);
  expect_bound(a, make_Min(x, i32(10)), kMin, 10);
  expect_bound(a, make_cast(DType::Int32, u), 0, 255);
  Buffer b = make_buffer("B", DType::Int8, {i32(4)}, {}, MemoryScope::Local);
  expect_bound(a, make_load(b, {i32(0)}), -128, 127);
  expect_bound(a, make_FloorDiv(i32(10), x), kMin, kMax);  // divisor may be 0
  EXPECT_FALSE(a.bound(make_float(1.0)));
  EXPECT_FALSE(a.bound(make_var("big", DType::UInt64)));
  EXPECT_FALSE(a.bound(Expr()));
}

TEST(BoundAnalyzer, BoundsWidenWhereArithmeticMayWrap) {
  BoundAnalyzer a;
  Expr x = make_var("x"), k = make_var("k", DType::Int8);
  a.bind(x, {0, 100000});
  a.bind(k, {0, 100});
  // 100000 * 100000 does not fit int32: the product wraps, so any int32 is possible.
  expect_bound(a, make_Mul(x, x), std::numeric_limits<int32_t>::min(),
               std::numeric_limits<int32_t>::max());
  expect_bound(a, make_Add(k, make_int(100, DType::Int8)), -128, 127);
  expect_bound(a, make_cast(DType::Int8, x), -128, 127);
  // bind() clamps to the dtype.
  a.bind(k, {-1000, 1000});
  expect_bound(a, k, -128, 127);
}

TEST(BoundAnalyzer, ProvesCopyBoundsChecks) {
  BoundAnalyzer a;
  Expr bx = make_var("bx"), i = make_var("i");
  a.bind(bx, {0, 3});
  a.bind(i, {0, 31});
  Expr row = make_Add(make_Mul(bx, i32(32)), i);
  EXPECT_TRUE(a.can_prove(make_LT(row, i32(128))));
  EXPECT_TRUE(a.can_prove(make_GE(row, i32(0))));
  EXPECT_TRUE(a.can_prove(make_And(make_GE(row, i32(0)), make_LT(row, i32(128)))));
  EXPECT_TRUE(a.can_prove(make_LE(row, i32(127))));
  EXPECT_TRUE(a.can_prove(make_GT(i32(128), row)));
  EXPECT_FALSE(a.can_prove(make_LT(row, i32(127))));
  EXPECT_FALSE(a.can_prove(make_GT(row, i32(0))));
  EXPECT_FALSE(a.can_prove(make_And(make_GE(row, i32(0)), make_LT(row, i32(100)))));
  // A symbolic bound is not provable without knowing M.
  Expr m = make_var("M");
  EXPECT_FALSE(a.can_prove(make_LT(row, m)));
  a.bind(m, {128, 4096});
  EXPECT_TRUE(a.can_prove(make_LT(row, m)));
}

TEST(BoundAnalyzer, CancelsLikeTerms) {
  BoundAnalyzer a;
  Expr x = make_var("x"), y = make_var("y"), i = make_var("i");
  a.bind(x, {0, 1000});
  a.bind(i, {0, 31});
  EXPECT_TRUE(a.can_prove(make_LT(make_Add(x, i32(1)), make_Add(x, i32(2)))));
  EXPECT_TRUE(a.can_prove(make_EQ(make_Add(x, i32(2)), make_Add(i32(1), make_Add(x, i32(1))))));
  EXPECT_TRUE(a.can_prove(make_NE(make_Add(x, i32(2)), make_Add(x, i32(1)))));
  EXPECT_FALSE(a.can_prove(make_LT(make_Add(x, i32(2)), make_Add(x, i32(1)))));
  Expr row = make_Add(make_Mul(x, i32(32)), i);
  EXPECT_TRUE(a.can_prove(make_LT(row, make_Add(make_Mul(x, i32(32)), i32(32)))));
  EXPECT_FALSE(a.can_prove(make_LT(row, make_Add(make_Mul(x, i32(32)), i32(31)))));
  // With y unbound, y + 1 might wrap, so y cancelling proves nothing.
  EXPECT_FALSE(a.can_prove(make_LT(make_Add(y, i32(1)), make_Add(y, i32(2)))));
  a.bind(y, {-50, 50});
  EXPECT_TRUE(a.can_prove(make_LT(make_Add(y, i32(1)), make_Add(y, i32(2)))));
  EXPECT_TRUE(a.can_prove(make_LE(make_Sub(make_Add(x, y), y), i32(1000))));
}

TEST(BoundAnalyzer, NeverProvesFalseThings) {
  BoundAnalyzer a;
  Expr x = make_var("x"), n = make_var("n");
  a.bind(x, {0, 10});
  constexpr int64_t kMin = std::numeric_limits<int32_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  // x - INT32_MIN wraps in int32; the analyzer must not conclude x < INT32_MIN.
  EXPECT_FALSE(a.can_prove(make_LT(x, i32(kMin))));
  EXPECT_TRUE(a.can_prove(make_GT(x, i32(kMin))));
  EXPECT_TRUE(a.can_prove(make_LT(x, i32(kMax))));
  // n + 1 > n is false for n = INT32_MAX.
  EXPECT_FALSE(a.can_prove(make_GT(make_Add(n, i32(1)), n)));
  EXPECT_FALSE(a.can_prove(make_LT(n, n)));
  EXPECT_TRUE(a.can_prove(make_LE(n, n)));
  EXPECT_FALSE(a.can_prove(make_LT(x, i32(10))));
  EXPECT_FALSE(a.can_prove(make_EQ(x, i32(0))));
  EXPECT_FALSE(a.can_prove(make_NE(x, i32(5))));
  EXPECT_FALSE(a.can_prove(make_Or(make_LT(x, i32(5)), make_GT(x, i32(5)))));
  EXPECT_FALSE(a.can_prove(make_LT(make_float(1.0), make_float(2.0))));
  EXPECT_FALSE(a.can_prove(make_bool(false)));
  EXPECT_FALSE(a.can_prove(Expr()));
  // x * x for x in [0, 100000] wraps in int32 and may be negative.
  Expr big = make_var("big");
  a.bind(big, {0, 100000});
  EXPECT_FALSE(a.can_prove(make_GE(make_Mul(big, big), i32(0))));
  // Unsigned subtraction wraps below zero.
  Expr u = make_var("u", DType::UInt32);
  a.bind(u, {0, 10});
  EXPECT_FALSE(a.can_prove(make_LT(make_Sub(u, make_int(1, DType::UInt32)), u)));
}

// Bounds hold for every sampled value and nothing false is proven, wrapping
// included.
TEST(BoundAnalyzer, RandomExpressionsStayInBounds) {
  std::mt19937 rng(4321);
  std::vector<Expr> vars = {make_var("x"), make_var("y"), make_var("z")};
  int proven = 0, checked = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    BoundAnalyzer a;
    std::vector<Interval> ranges;
    for (const Expr& v : vars) {
      int64_t lo = static_cast<int64_t>(rng() % 61) - 30;
      int64_t hi = lo + static_cast<int64_t>(rng() % (iter % 5 == 0 ? 100000 : 20));
      ranges.push_back({lo, hi});
      a.bind(v, ranges.back());
    }
    Expr e = random_int_expr(rng, vars, 4, iter % 3 == 0);
    Expr c = iter % 2 ? random_bool_expr(rng, vars, 3)
                      : make_binary(iter % 4 ? ExprKind::LT : ExprKind::LE, e,
                                    make_Add(random_int_expr(rng, vars, 1, false), e));
    auto b = a.bound(e);
    ASSERT_TRUE(b);
    bool yes = a.can_prove(c), no = a.can_prove(make_not(c));
    ASSERT_FALSE(yes && no) << to_string(c);
    proven += yes || no;
    for (int sample = 0; sample < 8; ++sample) {
      std::unordered_map<const ExprNode*, int64_t> env;
      for (size_t i = 0; i < vars.size(); ++i) {
        uint64_t span = static_cast<uint64_t>(ranges[i].max - ranges[i].min) + 1;
        env[vars[i].get()] = ranges[i].min + static_cast<int64_t>(rng() % span);
      }
      bool overflow = false;
      if (auto v = eval_int32(e, env, &overflow)) {
        ASSERT_GE(*v, b->min) << to_string(e);
        ASSERT_LE(*v, b->max) << to_string(e);
        ++checked;
      }
      if (auto v = eval_int32(c, env, &overflow)) {
        if (yes) {
          ASSERT_EQ(*v, 1) << to_string(c);
        }
        if (no) {
          ASSERT_EQ(*v, 0) << to_string(c);
        }
      }
    }
  }
  EXPECT_GT(proven, 300);
  EXPECT_GT(checked, 10000);
}

TEST(BoundAnalyzer, LogicalConnectives) {
  BoundAnalyzer a;
  Expr x = make_var("x");
  a.bind(x, {0, 10});
  EXPECT_TRUE(a.can_prove(make_bool(true)));
  EXPECT_TRUE(a.can_prove(make_not(make_GT(x, i32(10)))));
  EXPECT_TRUE(a.can_prove(make_not(make_EQ(x, i32(11)))));
  EXPECT_TRUE(a.can_prove(make_Or(make_LT(x, i32(0)), make_LE(x, i32(10)))));
  EXPECT_TRUE(a.can_prove(make_not(make_And(make_LT(x, i32(0)), make_GT(x, i32(5))))));
  EXPECT_TRUE(a.can_prove(make_not(make_Or(make_LT(x, i32(0)), make_GT(x, i32(10))))));
  EXPECT_FALSE(a.can_prove(make_not(make_LT(x, i32(5)))));
}

}  // namespace
}  // namespace tilec::ir

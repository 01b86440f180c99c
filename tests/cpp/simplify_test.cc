#include "ir/simplify.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <unordered_map>

#include "ir/equal.h"
#include "ir/ir.h"
#include "ir/printer.h"

namespace tilec::ir {

// Evaluates an int32/bool expression over Var values in `env`, with the IR's
// semantics (wrapping int32 arithmetic, Python floor div/mod). nullopt on
// division by zero. `overflow` is set when some intermediate wrapped. Shared
// with bound_test.cc.
std::optional<int64_t> eval_int32(const Expr& e,
                                  const std::unordered_map<const ExprNode*, int64_t>& env,
                                  bool* overflow) {
  auto wrap = [&](int64_t v) {
    int64_t w = static_cast<int32_t>(static_cast<uint32_t>(v));
    *overflow |= w != v;
    return w;
  };
  if (auto* imm = e.as<IntImm>()) return imm->value;
  if (e.as<Var>()) return env.at(e.get());
  if (auto* n = e.as<Not>()) {
    auto a = eval_int32(n->a, env, overflow);
    return a ? std::optional<int64_t>(*a == 0) : std::nullopt;
  }
  if (auto* s = e.as<Select>()) {
    auto c = eval_int32(s->condition, env, overflow);
    auto t = eval_int32(s->true_value, env, overflow);
    auto f = eval_int32(s->false_value, env, overflow);
    if (!c || !t || !f) return std::nullopt;
    return *c ? *t : *f;
  }
  const Expr *pa = nullptr, *pb = nullptr;
  switch (e.kind()) {
#define TILEC_OPERANDS(n)                    \
  case ExprKind::n:                          \
    pa = &static_cast<const n*>(e.get())->a; \
    pb = &static_cast<const n*>(e.get())->b; \
    break;
    TILEC_FOR_EACH_BINARY_EXPR(TILEC_OPERANDS)
#undef TILEC_OPERANDS
    default: return std::nullopt;
  }
  auto oa = eval_int32(*pa, env, overflow);
  auto ob = eval_int32(*pb, env, overflow);
  if (!oa || !ob) return std::nullopt;
  int64_t a = *oa, b = *ob;
  switch (e.kind()) {
    case ExprKind::Add: return wrap(a + b);
    case ExprKind::Sub: return wrap(a - b);
    case ExprKind::Mul: return wrap(a * b);
    case ExprKind::Div: return b == 0 ? std::nullopt : std::optional(wrap(a / b));
    case ExprKind::FloorDiv: {
      if (b == 0) return std::nullopt;
      int64_t q = a / b;
      if (a % b != 0 && ((a < 0) != (b < 0))) --q;
      return wrap(q);
    }
    case ExprKind::FloorMod: {
      if (b == 0) return std::nullopt;
      int64_t r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
    case ExprKind::BitXor: return a ^ b;
    case ExprKind::Min: return std::min(a, b);
    case ExprKind::Max: return std::max(a, b);
    case ExprKind::EQ: return a == b;
    case ExprKind::NE: return a != b;
    case ExprKind::LT: return a < b;
    case ExprKind::LE: return a <= b;
    case ExprKind::GT: return a > b;
    case ExprKind::GE: return a >= b;
    case ExprKind::And: return a && b;
    case ExprKind::Or: return a || b;
    default: return std::nullopt;
  }
}

Expr random_bool_expr(std::mt19937& rng, const std::vector<Expr>& vars, int depth);

// A random int32 expression over `vars` and small constants (`wide` adds
// constants near the int32 limits).
Expr random_int_expr(std::mt19937& rng, const std::vector<Expr>& vars, int depth, bool wide) {
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  if (depth == 0 || pick(4) == 0) {
    if (pick(2)) return vars[pick(vars.size())];
    if (wide && pick(4) == 0) {
      const int64_t extremes[] = {2147483647, -2147483647 - 1, 65536, -65536};
      return make_int(extremes[pick(4)]);
    }
    return make_int(pick(17) - 8);
  }
  auto sub = [&] { return random_int_expr(rng, vars, depth - 1, wide); };
  const ExprKind kinds[] = {ExprKind::Add,      ExprKind::Add, ExprKind::Sub, ExprKind::Sub,
                            ExprKind::Mul,      ExprKind::Mul, ExprKind::Div, ExprKind::FloorDiv,
                            ExprKind::FloorMod, ExprKind::BitXor, ExprKind::Min, ExprKind::Max};
  int k = pick(std::size(kinds) + 1);
  if (k == static_cast<int>(std::size(kinds))) {
    Expr c = random_bool_expr(rng, vars, depth - 1);
    Expr t = sub();
    return make_select(c, t, sub());
  }
  Expr a = sub();
  return make_binary(kinds[k], a, sub());
}

Expr random_bool_expr(std::mt19937& rng, const std::vector<Expr>& vars, int depth) {
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  if (depth > 0 && pick(4) == 0) {
    Expr a = random_bool_expr(rng, vars, depth - 1);
    switch (pick(3)) {
      case 0: return make_not(a);
      case 1: return make_And(a, random_bool_expr(rng, vars, depth - 1));
      default: return make_Or(a, random_bool_expr(rng, vars, depth - 1));
    }
  }
  const ExprKind cmps[] = {ExprKind::EQ, ExprKind::NE, ExprKind::LT,
                           ExprKind::LE, ExprKind::GT, ExprKind::GE};
  Expr a = random_int_expr(rng, vars, std::max(depth - 1, 0), false);
  return make_binary(cmps[pick(6)], a, random_int_expr(rng, vars, std::max(depth - 1, 0), false));
}

namespace {

constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

Expr i32(int64_t v) { return make_int(v); }

struct IntCase {
  ExprKind kind;
  DType dtype;
  int64_t a, b, expected;
};

TEST(Simplify, FoldsIntegerArithmeticExactly) {
  const IntCase cases[] = {
      {ExprKind::Add, DType::Int32, 2, 3, 5},
      {ExprKind::Add, DType::Int32, kI32Max, 1, kI32Min},
      {ExprKind::Sub, DType::Int32, kI32Min, 1, kI32Max},
      {ExprKind::Mul, DType::Int32, 65536, 65536, 0},
      {ExprKind::Mul, DType::Int32, 65537, 65537, 131073},
      {ExprKind::Add, DType::Int8, 127, 1, -128},
      {ExprKind::Add, DType::UInt8, 255, 1, 0},
      {ExprKind::Sub, DType::UInt8, 0, 1, 255},
      {ExprKind::Sub, DType::UInt32, 0, 1, 4294967295},
      {ExprKind::Add, DType::Int64, kI64Max, 1, kI64Min},
      {ExprKind::Mul, DType::Int64, kI64Min, -1, kI64Min},
      {ExprKind::Div, DType::Int32, 7, 2, 3},
      {ExprKind::Div, DType::Int32, -7, 2, -3},
      {ExprKind::Div, DType::Int32, 7, -2, -3},
      {ExprKind::Div, DType::Int32, kI32Min, -1, kI32Min},
      {ExprKind::Div, DType::Int64, kI64Min, -1, kI64Min},
      {ExprKind::FloorDiv, DType::Int32, 7, 2, 3},
      {ExprKind::FloorDiv, DType::Int32, -7, 2, -4},
      {ExprKind::FloorDiv, DType::Int32, 7, -2, -4},
      {ExprKind::FloorDiv, DType::Int32, -7, -2, 3},
      {ExprKind::FloorDiv, DType::Int32, -8, 2, -4},
      {ExprKind::FloorDiv, DType::Int32, kI32Min, -1, kI32Min},
      {ExprKind::FloorDiv, DType::Int64, kI64Min, -1, kI64Min},
      {ExprKind::FloorMod, DType::Int32, 7, 2, 1},
      {ExprKind::FloorMod, DType::Int32, -7, 2, 1},
      {ExprKind::FloorMod, DType::Int32, 7, -2, -1},
      {ExprKind::FloorMod, DType::Int32, -7, -2, -1},
      {ExprKind::FloorMod, DType::Int32, -8, 2, 0},
      {ExprKind::FloorMod, DType::Int32, -1, 5, 4},
      {ExprKind::FloorMod, DType::Int64, kI64Min, -1, 0},
      {ExprKind::FloorDiv, DType::UInt32, 4294967295, 2, 2147483647},
      {ExprKind::FloorDiv, DType::UInt64, -1, 2, kI64Max},  // 2^64 - 1 as uint64
      {ExprKind::FloorMod, DType::UInt64, -1, 10, 5},
      {ExprKind::Min, DType::Int32, -1, 1, -1},
      {ExprKind::Max, DType::Int32, -1, 1, 1},
      {ExprKind::Min, DType::UInt64, -1, 1, 1},
      {ExprKind::Max, DType::UInt64, -1, 1, -1},
      {ExprKind::BitAnd, DType::Int32, -7, 12, 8},
      {ExprKind::BitOr, DType::UInt16, 0x8000, 0x0101, 0x8101},
      {ExprKind::ShiftLeft, DType::Int8, 64, 1, -128},
      {ExprKind::ShiftLeft, DType::UInt16, 0xFFFF, 8, 0xFF00},
      {ExprKind::ShiftRight, DType::Int32, -16, 2, -4},  // arithmetic on signed types
      {ExprKind::ShiftRight, DType::UInt32, 4294967280, 2, 1073741820},
  };
  for (const IntCase& c : cases) {
    Expr e = make_binary(c.kind, make_int(c.a, c.dtype), make_int(c.b, c.dtype));
    Expr r = simplify(e);
    auto* imm = r.as<IntImm>();
    ASSERT_NE(imm, nullptr) << to_string(e);
    EXPECT_EQ(imm->value, c.expected) << to_string(e);
    EXPECT_EQ(r->dtype, c.dtype) << to_string(e);
  }
}

TEST(Simplify, LeavesShiftsPastTheWidthAsWritten) {
  for (int64_t count : {-1, 32, 40}) {
    Expr e = make_ShiftLeft(make_int(1), make_int(count));
    EXPECT_EQ(simplify(e).as<IntImm>(), nullptr) << to_string(e);
  }
}

TEST(Simplify, FoldsComparisonsAndLogic) {
  auto folds_to = [](const Expr& e, bool v) {
    Expr r = simplify(e);
    ASSERT_TRUE(r.as<IntImm>()) << to_string(e);
    EXPECT_EQ(r->dtype, DType::Bool);
    EXPECT_EQ(r.as<IntImm>()->value, v ? 1 : 0) << to_string(e);
  };
  folds_to(make_LT(i32(-1), i32(1)), true);
  folds_to(make_LE(i32(2), i32(2)), true);
  folds_to(make_GT(i32(-1), i32(1)), false);
  folds_to(make_GE(i32(1), i32(2)), false);
  folds_to(make_EQ(i32(3), i32(3)), true);
  folds_to(make_NE(i32(3), i32(3)), false);
  folds_to(make_LT(make_int(-1, DType::UInt64), make_int(1, DType::UInt64)), false);
  folds_to(make_LT(make_float(0.5), make_float(1.5)), true);
  folds_to(make_EQ(make_float(std::nan("")), make_float(std::nan(""))), false);
  folds_to(make_NE(make_float(std::nan("")), make_float(1.0)), true);
  folds_to(make_And(make_bool(true), make_bool(false)), false);
  folds_to(make_Or(make_bool(true), make_bool(false)), true);
  folds_to(make_not(make_bool(false)), true);
  folds_to(make_not(make_LT(i32(1), i32(2))), false);

  Expr c = make_LT(make_var("x"), i32(4));
  EXPECT_TRUE(simplify(make_And(make_bool(true), c)).same_as(c));
  EXPECT_TRUE(simplify(make_Or(c, make_bool(false))).same_as(c));
  folds_to(make_And(c, make_bool(false)), false);
  folds_to(make_Or(make_bool(true), c), true);
  EXPECT_TRUE(simplify(make_not(make_not(c))).same_as(c));
}

TEST(Simplify, FoldsSelectAndFloats) {
  Expr x = make_var("x"), y = make_var("y");
  EXPECT_TRUE(simplify(make_select(make_bool(true), x, y)).same_as(x));
  EXPECT_TRUE(simplify(make_select(make_LT(i32(2), i32(1)), x, y)).same_as(y));
  EXPECT_TRUE(simplify(make_select(make_LT(x, y), x, x)).same_as(x));

  auto float_of = [](const Expr& e) {
    Expr r = simplify(e);
    EXPECT_TRUE(r.as<FloatImm>()) << to_string(e);
    return r.as<FloatImm>() ? r.as<FloatImm>()->value : 0.0;
  };
  EXPECT_EQ(float_of(make_Add(make_float(0.1), make_float(0.2))), double(0.1f + 0.2f));
  EXPECT_EQ(float_of(make_Add(make_float(0.1, DType::Float64), make_float(0.2, DType::Float64))),
            0.1 + 0.2);
  EXPECT_EQ(float_of(make_Div(make_float(1.0), make_float(3.0))), double(1.0f / 3.0f));
  EXPECT_EQ(float_of(make_Min(make_float(1.0), make_float(-2.0))), -2.0);
  // Not folded: division by zero, soft floats, NaN min, signed zeros, intrinsics.
  EXPECT_TRUE(simplify(make_Div(make_float(1.0), make_float(0.0))).as<Div>());
  EXPECT_TRUE(
      simplify(make_Add(make_float(1, DType::Float16), make_float(2, DType::Float16))).as<Add>());
  EXPECT_TRUE(simplify(make_Max(make_float(std::nan("")), make_float(1.0))).as<Max>());
  EXPECT_TRUE(simplify(make_Min(make_float(0.0), make_float(-0.0))).as<Min>());
  EXPECT_TRUE(simplify(make_FloorDiv(make_float(7.0), make_float(2.0))).as<FloorDiv>());
  EXPECT_TRUE(simplify(make_call(DType::Float32, "exp", {make_float(1.0)})).as<Call>());
}

TEST(Simplify, DoesNotFoldDivisionByZero) {
  for (ExprKind k : {ExprKind::Div, ExprKind::FloorDiv, ExprKind::FloorMod}) {
    Expr e = make_binary(k, i32(7), i32(0));
    EXPECT_TRUE(simplify(e).same_as(e));
  }
}

TEST(Simplify, FoldsCasts) {
  auto int_of = [](DType t, const Expr& v) {
    Expr r = simplify(make_cast(t, v));
    EXPECT_TRUE(r.as<IntImm>()) << to_string(make_cast(t, v));
    EXPECT_EQ(r->dtype, t);
    return r.as<IntImm>() ? r.as<IntImm>()->value : -999;
  };
  EXPECT_EQ(int_of(DType::Int8, i32(300)), 44);
  EXPECT_EQ(int_of(DType::Int8, i32(200)), -56);
  EXPECT_EQ(int_of(DType::UInt8, i32(-1)), 255);
  EXPECT_EQ(int_of(DType::Int32, make_int(255, DType::UInt8)), 255);
  EXPECT_EQ(int_of(DType::Int64, make_int(-1, DType::Int32)), -1);
  EXPECT_EQ(int_of(DType::Int64, make_int(4294967295, DType::UInt32)), 4294967295);
  EXPECT_EQ(int_of(DType::Int32, make_float(2.7)), 2);
  EXPECT_EQ(int_of(DType::Int32, make_float(-2.7)), -2);
  EXPECT_EQ(int_of(DType::UInt8, make_float(255.9)), 255);
  EXPECT_EQ(int_of(DType::Int32, make_bool(true)), 1);
  EXPECT_EQ(int_of(DType::Bool, i32(5)), 1);
  EXPECT_EQ(int_of(DType::Bool, make_float(0.0)), 0);
  EXPECT_EQ(int_of(DType::Bool, make_float(std::nan(""))), 1);

  auto float_of = [](DType t, const Expr& v) {
    Expr r = simplify(make_cast(t, v));
    EXPECT_TRUE(r.as<FloatImm>()) << to_string(make_cast(t, v));
    EXPECT_EQ(r->dtype, t);
    return r.as<FloatImm>() ? r.as<FloatImm>()->value : -999.0;
  };
  EXPECT_EQ(float_of(DType::Float32, i32(16777217)), 16777216.0);
  EXPECT_EQ(float_of(DType::Float64, i32(16777217)), 16777217.0);
  EXPECT_EQ(float_of(DType::Float32, make_float(0.1, DType::Float64)), double(0.1f));
  EXPECT_EQ(float_of(DType::Float64, make_int(-1, DType::UInt64)), 18446744073709551615.0);

  // Not folded: out of range or NaN to int, anything to or from soft floats.
  for (auto [t, v] :
       {std::pair{DType::Int32, make_float(3e9)}, std::pair{DType::UInt8, make_float(-1.0)},
        std::pair{DType::Int64, make_float(std::nan(""))}, std::pair{DType::Float16, i32(1)},
        std::pair{DType::BFloat16, make_float(1.5)}, std::pair{DType::Float8E4M3, make_float(1.5)},
        std::pair{DType::Float32, make_float(1.5, DType::Float16)}}) {
    Expr e = make_cast(t, v);
    EXPECT_TRUE(simplify(e).same_as(e)) << to_string(e);
  }
}

TEST(Simplify, Identities) {
  Expr x = make_var("x"), y = make_var("y");
  Expr f = make_var("f", DType::Float32);
  EXPECT_TRUE(simplify(make_Add(x, i32(0))).same_as(x));
  EXPECT_TRUE(simplify(make_Add(i32(0), x)).same_as(x));
  EXPECT_TRUE(simplify(make_Sub(x, i32(0))).same_as(x));
  EXPECT_TRUE(simplify(make_Mul(x, i32(1))).same_as(x));
  EXPECT_TRUE(simplify(make_Mul(i32(1), x)).same_as(x));
  EXPECT_TRUE(simplify(make_Div(x, i32(1))).same_as(x));
  EXPECT_TRUE(simplify(make_FloorDiv(x, i32(1))).same_as(x));
  EXPECT_TRUE(is_zero(simplify(make_FloorMod(x, i32(1)))));
  EXPECT_TRUE(is_zero(simplify(make_Mul(x, i32(0)))));
  EXPECT_TRUE(is_zero(simplify(make_Mul(i32(0), x))));
  EXPECT_TRUE(is_zero(simplify(make_Sub(x, x))));
  Expr u = make_var("u", DType::UInt32);
  EXPECT_TRUE(is_zero(simplify(make_Sub(u, u))));
  EXPECT_TRUE(simplify(make_Min(x, x)).same_as(x));
  EXPECT_TRUE(simplify(make_Max(f, f)).same_as(f));
  EXPECT_EQ(to_string(simplify(make_EQ(x, x))), "True");
  EXPECT_EQ(to_string(simplify(make_LE(x, x))), "True");
  EXPECT_EQ(to_string(simplify(make_LT(x, x))), "False");
  EXPECT_EQ(to_string(simplify(make_NE(x, x))), "False");
  // Float x * 0 is not 0 (NaN, inf, -0.0); f == f is false for NaN.
  EXPECT_EQ(to_string(simplify(make_Mul(f, make_float(0.0)))), "f * 0.0");
  EXPECT_EQ(to_string(simplify(make_EQ(f, f))), "f == f");
  EXPECT_EQ(to_string(simplify(make_Sub(f, f))), "f - f");
}

TEST(Simplify, RegroupsConstants) {
  Expr x = make_var("x"), y = make_var("y");
  auto s = [](const Expr& e) { return to_string(simplify(e)); };
  EXPECT_EQ(s(make_Add(i32(2), x)), "x + 2");
  EXPECT_EQ(s(make_Mul(i32(2), x)), "x * 2");
  EXPECT_EQ(s(make_Min(i32(2), x)), "T.min(x, 2)");
  EXPECT_EQ(s(make_Add(make_Add(x, i32(1)), i32(2))), "x + 3");
  EXPECT_EQ(s(make_Add(make_Sub(x, i32(1)), i32(3))), "x + 2");
  EXPECT_EQ(s(make_Add(make_Sub(x, i32(3)), i32(1))), "x - 2");
  EXPECT_EQ(s(make_Sub(make_Add(x, i32(1)), i32(3))), "x - 2");
  EXPECT_EQ(s(make_Sub(make_Sub(x, i32(1)), i32(3))), "x - 4");
  EXPECT_EQ(s(make_Add(make_Add(x, i32(1)), i32(-1))), "x");
  EXPECT_EQ(s(make_Add(x, i32(-3))), "x - 3");
  EXPECT_EQ(s(make_Sub(x, i32(-3))), "x + 3");
  EXPECT_EQ(s(make_Add(i32(3), make_Add(x, i32(4)))), "x + 7");
  EXPECT_EQ(s(make_Mul(make_Mul(x, i32(2)), i32(3))), "x * 6");
  EXPECT_EQ(s(make_Mul(i32(2), make_Mul(i32(3), x))), "x * 6");
  EXPECT_EQ(s(make_Add(make_Mul(make_Add(x, i32(1)), i32(4)), i32(4))), "x * 4 + 8");
  EXPECT_EQ(s(make_Add(make_Sub(i32(5), x), i32(1))), "6 - x");
  EXPECT_EQ(s(make_Add(make_Add(x, i32(kI32Max)), i32(1))), "x + -2147483648");
  EXPECT_EQ(s(make_Add(make_Add(make_int(1, DType::UInt8), make_var("b", DType::UInt8)),
                       make_int(2, DType::UInt8))),
            "b + T.uint8(3)");
  Expr u = make_var("u", DType::UInt32);
  EXPECT_EQ(s(make_Add(u, make_int(4294967295, DType::UInt32))), "u - T.uint32(1)");
  EXPECT_EQ(s(make_Sub(make_Add(u, make_int(1, DType::UInt32)), make_int(3, DType::UInt32))),
            "u - T.uint32(2)");
}

TEST(Simplify, CancelsLikeTerms) {
  Expr x = make_var("x"), y = make_var("y"), bx = make_var("bx"), i = make_var("i");
  auto s = [](const Expr& e) { return to_string(simplify(e)); };
  EXPECT_EQ(s(make_Sub(make_Add(x, y), x)), "y");
  EXPECT_EQ(s(make_Add(x, make_Sub(y, x))), "y");
  EXPECT_EQ(s(make_Add(x, x)), "x * 2");
  EXPECT_EQ(s(make_Sub(make_Add(make_Mul(bx, i32(32)), i), make_Mul(bx, i32(32)))), "i");
  EXPECT_EQ(s(make_Sub(make_Add(x, i32(3)), make_Add(x, i32(5)))), "-2");
  EXPECT_EQ(s(make_Sub(make_Add(make_Mul(x, i32(3)), y), make_Add(x, y))), "x * 2");
  EXPECT_EQ(s(make_Sub(y, make_Add(x, y))), "0 - x");
  Buffer b = make_buffer("B", DType::Int32, {i32(8)}, {}, MemoryScope::Local);
  Expr load = make_load(b, {i});
  EXPECT_EQ(s(make_Sub(make_Add(make_load(b, {i}), x), make_load(b, {i}))), "x");
  EXPECT_EQ(s(make_Add(load, y)), "B[i] + y");
}

TEST(Simplify, MultiplesDividedByTheirFactor) {
  Expr x = make_var("x");
  auto s = [](const Expr& e) { return to_string(simplify(e)); };
  EXPECT_EQ(s(make_FloorDiv(make_Mul(x, i32(4)), i32(4))), "x");
  EXPECT_EQ(s(make_FloorMod(make_Mul(x, i32(4)), i32(4))), "0");
  EXPECT_EQ(s(make_FloorDiv(make_Mul(x, i32(8)), i32(4))), "x * 2");
  EXPECT_EQ(s(make_FloorMod(make_Mul(x, i32(8)), i32(4))), "0");
  EXPECT_EQ(s(make_FloorDiv(make_Mul(i32(4), x), i32(4))), "x");
  EXPECT_EQ(s(make_FloorDiv(make_Mul(x, i32(6)), i32(4))), "x * 6 // 4");
  EXPECT_EQ(s(make_FloorDiv(make_Mul(x, i32(4)), i32(-4))), "x * 4 // -4");
  EXPECT_EQ(s(make_FloorMod(make_Mul(x, i32(4)), i32(3))), "x * 4 % 3");
}

TEST(Simplify, QuotientsThatARemainderNeverReaches) {
  // A thread's 8 consecutive columns (tx & 63) * 8 + (u & 7), divided by a group of 128: the
  // same quotient for all 8, so the code reads one group's scale instead of 8.
  Expr tx = make_var("tx"), u = make_var("u");
  Expr column = make_Add(make_BitAnd(u, i32(7)), make_Mul(make_BitAnd(tx, i32(63)), i32(8)));
  auto s = [](const Expr& e) { return to_string(simplify(e)); };
  EXPECT_EQ(s(make_FloorDiv(column, i32(128))), "(tx & 63) // 16");
  EXPECT_EQ(s(make_ShiftRight(column, i32(7))), "(tx & 63) >> 4");
  EXPECT_EQ(s(make_ShiftRight(column, i32(3))), "tx & 63");
  EXPECT_EQ(s(make_FloorDiv(column, i32(8))), "tx & 63");
  // a remainder that may reach the factor, a factor that does not divide, a sum that may wrap
  Expr wide = make_Add(make_BitAnd(u, i32(15)), make_Mul(make_BitAnd(tx, i32(63)), i32(8)));
  EXPECT_EQ(s(make_FloorDiv(wide, i32(128))), "((u & 15) + (tx & 63) * 8) // 128");
  EXPECT_EQ(s(make_FloorDiv(column, i32(12))), "((u & 7) + (tx & 63) * 8) // 12");
  Expr unbounded = make_Add(make_BitAnd(u, i32(7)), make_Mul(tx, i32(8)));
  EXPECT_EQ(s(make_FloorDiv(unbounded, i32(128))), "((u & 7) + tx * 8) // 128");
}

TEST(Simplify, RemaindersDropTermsThatAreMultiplesOfTheDivisor) {
  // A thread's 16-byte part of a row, 64 c + 16 part + e: its offset 64 c + 16 part is a
  // multiple of 16, so its loads move 16 bytes at a time.
  Expr c = make_var("c"), part = make_var("part"), e = make_var("e");
  auto s = [](const Expr& x) { return to_string(simplify(x)); };
  EXPECT_EQ(s(make_FloorMod(make_Add(make_Mul(c, i32(64)), make_Mul(part, i32(16))), i32(16))), "0");
  EXPECT_EQ(s(make_FloorMod(make_Add(make_Add(make_Mul(c, i32(64)), make_Mul(part, i32(16))), e), i32(16))), "e % 16");
  // 3 does not divide 2^32: the sum must not wrap, which unbounded vars may
  EXPECT_EQ(s(make_FloorMod(make_Add(make_Mul(c, i32(6)), e), i32(3))), "(c * 6 + e) % 3");
  Expr small = make_BitAnd(c, i32(7));
  EXPECT_EQ(s(make_FloorMod(make_Add(make_Mul(small, i32(6)), make_BitAnd(e, i32(7))), i32(3))), "(e & 7) % 3");
  EXPECT_EQ(s(make_FloorMod(make_Add(make_Mul(c, i32(8)), e), i32(16))), "(c * 8 + e) % 16");
}

TEST(Simplify, KeepsIdentityAndIsIdempotent) {
  Expr x = make_var("x"), y = make_var("y");
  Buffer b = make_buffer("B", DType::Float32, {i32(8)}, {}, MemoryScope::Local);
  Expr already[] = {make_Add(x, i32(3)),
                    make_Sub(x, i32(3)),
                    make_Sub(i32(6), x),
                    make_Add(make_Mul(x, i32(4)), y),
                    make_FloorMod(x, i32(8)),
                    make_LT(make_Add(x, y), i32(4)),
                    make_call(DType::Float32, "exp", {make_load(b, {x})})};
  for (const Expr& e : already) EXPECT_TRUE(simplify(e).same_as(e)) << to_string(e);

  Expr messy[] = {make_Add(make_Sub(make_Add(x, i32(1)), make_Mul(i32(2), y)), i32(-1)),
                  make_Sub(make_Add(make_Mul(x, i32(4)), i32(3)), make_Add(x, i32(7))),
                  make_Add(make_Add(i32(1), x), make_Add(i32(2), x))};
  for (const Expr& e : messy) {
    Expr once = simplify(e);
    EXPECT_FALSE(once.same_as(e));
    EXPECT_TRUE(simplify(once).same_as(once)) << to_string(once);
  }
  EXPECT_EQ(to_string(simplify(messy[0])), "x - y * 2");
  EXPECT_EQ(to_string(simplify(messy[1])), "x * 3 - 4");
  EXPECT_EQ(to_string(simplify(messy[2])), "x * 2 + 3");
}

TEST(Simplify, LinearSum) {
  Expr x = make_var("x"), y = make_var("y");
  auto sum = linear_sum(make_Sub(make_Add(make_Mul(x, i32(3)), i32(4)), make_Mul(i32(2), y)));
  ASSERT_TRUE(sum);
  ASSERT_EQ(sum->terms.size(), 2u);
  EXPECT_TRUE(sum->terms[0].first.same_as(x));
  EXPECT_EQ(sum->terms[0].second, 3);
  EXPECT_TRUE(sum->terms[1].first.same_as(y));
  EXPECT_EQ(sum->terms[1].second, -2);
  EXPECT_EQ(sum->constant, 4);
  auto cancelled = linear_sum(make_Sub(make_Add(x, y), x));
  ASSERT_TRUE(cancelled);
  ASSERT_EQ(cancelled->terms.size(), 1u);
  EXPECT_TRUE(cancelled->terms[0].first.same_as(y));
  Expr big = make_int(kI64Max, DType::Int64);
  EXPECT_FALSE(linear_sum(make_Add(big, big)));
}

// Random expressions keep their value under simplify wherever the original
// does not overflow (the one assumption simplify makes, for (x * c) // c).
TEST(Simplify, RandomExpressionsKeepTheirValue) {
  std::mt19937 rng(1234);
  std::vector<Expr> vars = {make_var("x"), make_var("y"), make_var("z")};
  int compared = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    Expr e =
        iter % 2 ? random_int_expr(rng, vars, 4, iter % 3 == 0) : random_bool_expr(rng, vars, 3);
    Expr s = simplify(e);
    EXPECT_TRUE(simplify(s).same_as(s)) << to_string(e) << " -> " << to_string(s);
    for (int sample = 0; sample < 8; ++sample) {
      std::unordered_map<const ExprNode*, int64_t> env;
      for (const Expr& v : vars) env[v.get()] = static_cast<int64_t>(rng() % 41) - 20;
      bool overflow = false, ignored = false;
      auto expected = eval_int32(e, env, &overflow);
      if (!expected || overflow) continue;
      auto actual = eval_int32(s, env, &ignored);
      ASSERT_TRUE(actual) << to_string(e) << " -> " << to_string(s);
      ASSERT_EQ(*actual, *expected) << to_string(e) << " -> " << to_string(s);
      ++compared;
    }
  }
  EXPECT_GT(compared, 10000);
}

// ---------------------------------------------------------------- statements

Buffer buf() {
  static Buffer b = make_buffer("A", DType::Int32, {i32(64)}, {}, MemoryScope::Local);
  return b;
}

bool is_nothing(const Stmt& s) {
  auto* seq = s.as<Seq>();
  return seq && seq->stmts.empty();
}

TEST(SimplifyStmt, ConstantConditions) {
  Stmt a = make_store(buf(), {i32(0)}, i32(1)), b = make_store(buf(), {i32(1)}, i32(2));
  EXPECT_TRUE(simplify(make_if(make_LT(i32(1), i32(2)), a, b)).same_as(a));
  EXPECT_TRUE(simplify(make_if(make_bool(false), a, b)).same_as(b));
  EXPECT_TRUE(is_nothing(simplify(make_if(make_bool(false), a))));
  Expr x = make_var("x");
  Stmt kept = make_if(make_LT(x, i32(2)), a, b);
  EXPECT_TRUE(simplify(kept).same_as(kept));
}

TEST(SimplifyStmt, Loops) {
  Expr i = make_var("i");
  Stmt body = make_store(buf(), {make_Add(i, i32(1))}, make_Mul(i, i32(2)));
  EXPECT_TRUE(is_nothing(simplify(make_for(i, i32(0), i32(0), ForKind::Serial, body))));
  EXPECT_TRUE(is_nothing(simplify(make_for(i, i32(0), i32(-3), ForKind::Parallel, body))));
  EXPECT_EQ(
      to_string(simplify(make_for(i, i32(5), make_Sub(i32(3), i32(2)), ForKind::Unrolled, body))),
      "A[6] = 10\n");
  Expr n = make_var("n");
  Stmt sym = make_for(i, i32(0), make_Add(n, i32(0)), ForKind::Serial, body);
  EXPECT_EQ(to_string(simplify(sym)), "for i in T.serial(n):\n    A[i + 1] = i * 2\n");
  Stmt kept = make_for(i, i32(0), n, ForKind::Serial, body);
  EXPECT_TRUE(simplify(kept).same_as(kept));
}

TEST(SimplifyStmt, SeqsAndLets) {
  Expr i = make_var("i"), v = make_var("v"), n = make_var("n");
  Stmt a = make_store(buf(), {i32(0)}, n), b = make_store(buf(), {i32(1)}, n);
  auto nested = std::make_shared<Seq>();
  auto inner = std::make_shared<Seq>();
  inner->stmts = {b, make_for(i, i32(0), i32(0), ForKind::Serial, a)};
  nested->stmts = {a, Stmt(inner), Stmt()};
  Stmt out = simplify(Stmt(nested));
  auto* seq = out.as<Seq>();
  ASSERT_NE(seq, nullptr);
  ASSERT_EQ(seq->stmts.size(), 2u);
  EXPECT_TRUE(seq->stmts[0].same_as(a));
  EXPECT_TRUE(seq->stmts[1].same_as(b));

  Stmt just_one = make_seq({a, make_if(make_bool(false), b)});
  EXPECT_TRUE(simplify(just_one).same_as(a));

  Stmt let = make_let(v, make_Add(i32(2), i32(3)), make_store(buf(), {v}, make_Mul(v, n)));
  EXPECT_EQ(to_string(simplify(let)), "A[5] = n * 5\n");
  Stmt sym_let = make_let(v, make_Add(n, i32(0)), make_store(buf(), {v}, v));
  EXPECT_EQ(to_string(simplify(sym_let)), "v = n\nA[v] = v\n");
}

TEST(SimplifyStmt, ReachesTileOpsAndKernels) {
  Expr bx = make_var("bx");
  Buffer s = make_buffer("S", DType::Int32, {i32(32)}, {}, MemoryScope::Shared);
  auto copy = std::make_shared<Copy>();
  copy->src = {buf(), {{make_Add(make_Mul(bx, i32(32)), i32(0)), make_Mul(i32(4), i32(8))}}};
  copy->dst = {s, {{make_Sub(bx, bx), i32(32)}}};
  auto launch = std::make_shared<KernelLaunch>();
  launch->grid = {make_FloorDiv(i32(64), i32(32))};
  launch->block_vars = {bx};
  launch->body = Stmt(copy);
  EXPECT_EQ(to_string(simplify(Stmt(launch))),
            "with T.Kernel(2, threads=128) as bx:\n"
            "    T.copy(A[bx * 32:bx * 32 + 32], S[0:32])\n");
}

}  // namespace
}  // namespace tilec::ir

// index_apart's proofs, checked against every value: an index claimed apart from another (in
// another iteration, or by its range) never equals it, for any two threads.
#include "passes/gpu/index_apart.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <unordered_map>

#include "ir/ir.h"
#include "ir/printer.h"
#include "ir/substitute.h"

namespace tilec::ir {
// simplify_test.cc
std::optional<int64_t> eval_int32(const Expr& e, const std::unordered_map<const ExprNode*, int64_t>& env,
                                  bool* overflow);
}  // namespace tilec::ir

namespace tilec::passes {
namespace {

using ir::Expr;

Expr i32(int64_t v) { return ir::make_int(v); }

// A loop var v (and o, another iteration's), an inner loop's var u (and u', any of its values),
// and a thread index t in [0, 128).
struct Vars {
  Expr v = ir::make_var("v"), o = ir::make_var("v'"), u = ir::make_var("u"), u_any = ir::make_var("u*");
  Expr t = ir::make_var("t");
  ir::VarMap originals;
  ir::BoundAnalyzer bounds;
  int64_t count, inner;

  Vars(int64_t count_, int64_t inner_) : count(count_), inner(inner_) {
    originals[o.get()] = v;
    originals[u_any.get()] = u;
    for (const Expr& var : {v, o}) bounds.bind(var, {0, count - 1});
    for (const Expr& var : {u, u_any}) bounds.bind(var, {0, inner - 1});
    bounds.bind(t, {0, 127});
  }

  // y's index in another iteration: v and u renamed.
  Expr other_iteration(const Expr& y) const {
    ir::VarMap map;
    map[v.get()] = o;
    map[u.get()] = u_any;
    return ir::substitute(y, map);
  }

  // Whether some two iterations (v != o) of some two threads give x == y.
  bool meet(const Expr& x, const Expr& y) const {
    for (int64_t a = 0; a < count; ++a)
      for (int64_t b = 0; b < count; ++b)
        for (int64_t ua = 0; ua < inner; ++ua)
          for (int64_t ub = 0; ub < inner; ++ub)
            for (int64_t ta = 0; ta < 128; ta += 7)
              for (int64_t tb = 0; tb < 128; tb += 11) {
                if (a == b) continue;
                bool overflow = false;
                auto vx = ir::eval_int32(x, {{o.get(), a}, {u_any.get(), ua}, {t.get(), ta}}, &overflow);
                auto vy = ir::eval_int32(y, {{v.get(), b}, {u.get(), ub}, {t.get(), tb}}, &overflow);
                if (vx && vy && *vx == *vy) return true;
              }
    return false;
  }
};

TEST(IndexApart, AWindowOfItsOwnEachIteration) {
  Vars n(4, 16);
  // row 32 * v + t / 4: t / 4 spans 32 values
  Expr y = ir::make_Add(ir::make_Mul(n.v, i32(32)), ir::make_FloorDiv(n.t, i32(4)));
  EXPECT_TRUE(iterations_apart(n.other_iteration(y), y, n.o, n.v, n.originals, n.bounds));
  EXPECT_FALSE(n.meet(n.other_iteration(y), y));
  // 16 * v + t / 4 spans 32: windows overlap
  Expr overlapping = ir::make_Add(ir::make_Mul(n.v, i32(16)), ir::make_FloorDiv(n.t, i32(4)));
  EXPECT_FALSE(iterations_apart(n.other_iteration(overlapping), overlapping, n.o, n.v, n.originals, n.bounds));
  EXPECT_TRUE(n.meet(n.other_iteration(overlapping), overlapping));
}

TEST(IndexApart, AResidueOfItsOwnEachIteration) {
  Vars n(16, 4);
  // column 64 * u + 16 * (t % 4) + v: each v its own residue mod 16
  Expr y = ir::make_Add(ir::make_Add(ir::make_Mul(n.u, i32(64)), ir::make_Mul(ir::make_FloorMod(n.t, i32(4)), i32(16))),
                        n.v);
  EXPECT_TRUE(iterations_apart(n.other_iteration(y), y, n.o, n.v, n.originals, n.bounds));
  EXPECT_FALSE(n.meet(n.other_iteration(y), y));
  // 8 * (t % 4) + v: residues mod 8 of 16 values of v repeat
  Expr repeating = ir::make_Add(ir::make_Mul(ir::make_FloorMod(n.t, i32(4)), i32(8)), n.v);
  EXPECT_FALSE(iterations_apart(n.other_iteration(repeating), repeating, n.o, n.v, n.originals, n.bounds));
  EXPECT_TRUE(n.meet(n.other_iteration(repeating), repeating));
}

TEST(IndexApart, OnlyTheSameAccessInAnotherIteration) {
  Vars n(4, 4);
  Expr y = ir::make_Add(ir::make_Mul(n.v, i32(32)), ir::make_FloorDiv(n.t, i32(4)));
  // not y renamed (another access), or the loop var not in it, or not linear in it
  Expr shifted = ir::make_Add(n.other_iteration(y), i32(1));
  EXPECT_FALSE(iterations_apart(shifted, y, n.o, n.v, n.originals, n.bounds));
  EXPECT_FALSE(iterations_apart(n.t, n.t, n.o, n.v, n.originals, n.bounds));
  Expr squared = ir::make_Mul(n.v, n.v);
  EXPECT_FALSE(iterations_apart(n.other_iteration(squared), squared, n.o, n.v, n.originals, n.bounds));
}

TEST(IndexApart, RangesThatDoNotMeet) {
  Vars n(2, 8);
  Expr low = ir::make_Add(ir::make_Mul(ir::make_FloorMod(n.t, i32(4)), i32(16)), n.u);        // 0 .. 55
  Expr high = ir::make_Add(i32(512), ir::make_Mul(ir::make_Add(ir::make_Mul(n.v, i32(4)), ir::make_FloorMod(n.t, i32(4))),
                                                  i32(8)));  // 512 .. 568
  EXPECT_TRUE(ranges_apart(low, high, n.bounds));
  EXPECT_FALSE(ranges_apart(low, ir::make_Add(low, i32(8)), n.bounds));
  // a value that may have wrapped has no range to compare
  Expr wide = ir::make_Mul(n.t, i32(1 << 30));
  EXPECT_FALSE(ranges_apart(wide, i32(-1), n.bounds));
}

TEST(IndexApart, CoefficientsThatWouldOverflowProveNothing) {
  Vars n(4, 4);
  const Expr huge = ir::make_int(INT64_MAX / 2, DType::Int64);
  Expr v64 = ir::make_cast(DType::Int64, n.v);
  Expr y = ir::make_Add(ir::make_Mul(ir::make_Mul(v64, huge), ir::make_int(4, DType::Int64)), v64);
  EXPECT_FALSE(iterations_apart(n.other_iteration(y), y, n.o, n.v, n.originals, n.bounds));
  Expr lowest = ir::make_Mul(v64, ir::make_int(INT64_MIN, DType::Int64));
  EXPECT_FALSE(iterations_apart(n.other_iteration(lowest), lowest, n.o, n.v, n.originals, n.bounds));
}

TEST(IndexApart, RandomIndicesClaimedApartNeverMeet) {
  std::mt19937 rng(7);
  Vars n(4, 4);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int claimed = 0;
  for (int round = 0; round < 300; ++round) {
    Expr thread = pick(0, 1) ? ir::make_FloorDiv(n.t, i32(pick(1, 64))) : ir::make_FloorMod(n.t, i32(pick(1, 8)));
    Expr y = ir::make_Add(ir::make_Add(ir::make_Mul(n.v, i32(pick(-40, 40))), ir::make_Mul(thread, i32(pick(0, 20)))),
                          ir::make_Add(ir::make_Mul(n.u, i32(pick(0, 20))), i32(pick(-5, 5))));
    Expr x = n.other_iteration(y);
    if (!iterations_apart(x, y, n.o, n.v, n.originals, n.bounds)) continue;
    ++claimed;
    EXPECT_FALSE(n.meet(x, y)) << ir::to_string(y);
  }
  EXPECT_GT(claimed, 20);
}

}  // namespace
}  // namespace tilec::passes

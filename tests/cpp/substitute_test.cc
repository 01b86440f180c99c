#include "ir/substitute.h"

#include <gtest/gtest.h>

#include "ir/equal.h"
#include "ir/ir.h"
#include "ir/printer.h"

namespace tilec::ir {
namespace {

TEST(Substitute, ReplacesVarsByIdentity) {
  Expr x = make_var("x"), y = make_var("y"), other_x = make_var("x");
  Expr e = make_Add(make_Mul(x, y), other_x);
  Expr out = substitute(e, x, make_int(3));
  EXPECT_EQ(to_string(out), "3 * y + x");
  EXPECT_TRUE(out.as<Add>()->b.same_as(other_x));

  VarMap map{{x.get(), y}, {y.get(), x}};  // simultaneous, not sequential
  EXPECT_EQ(to_string(substitute(e, map)), "y * x + x_1");
}

TEST(Substitute, UnchangedKeepsIdentity) {
  Expr x = make_var("x"), y = make_var("y");
  Expr e = make_Add(x, make_int(1));
  EXPECT_TRUE(substitute(e, y, make_int(2)).same_as(e));
  EXPECT_TRUE(substitute(e, VarMap{}).same_as(e));
  Stmt s = make_evaluate(e);
  EXPECT_TRUE(substitute(s, VarMap{{y.get(), x}}).same_as(s));
}

TEST(Substitute, ReachesStatementsAndRegions) {
  Expr i = make_var("i"), n = make_var("n");
  Buffer a = make_buffer("A", DType::Float32, {n}, {}, MemoryScope::Global);
  Buffer s = make_buffer("S", DType::Float32, {make_int(32)}, {}, MemoryScope::Shared);
  auto copy = std::make_shared<Copy>();
  copy->src = {a, {{make_Mul(i, make_int(32)), make_int(32)}}};
  copy->dst = {s, {{make_int(0), make_int(32)}}};
  Stmt body = make_seq({Stmt(copy), make_store(a, {i}, make_load(s, {i}))});
  Stmt out = substitute(body, VarMap{{i.get(), make_int(2)}, {n.get(), make_int(64)}});
  EXPECT_EQ(to_string(out),
            "T.copy(A[2 * 32:2 * 32 + 32], S[0:32])\n"
            "A[2] = S[2]\n");
  // Buffer shapes are not rewritten.
  EXPECT_TRUE(out.as<Seq>()->stmts[1].as<BufferStore>()->buffer->shape[0].same_as(n));
}

TEST(Substitute, ResultIsStructurallyTheSameAsBuildingDirectly) {
  Expr x = make_var("x"), k = make_var("k");
  Expr e = make_select(make_LT(x, k), make_FloorDiv(x, k), make_FloorMod(x, k));
  Expr expected = make_select(make_LT(make_int(5), k), make_FloorDiv(make_int(5), k),
                              make_FloorMod(make_int(5), k));
  EXPECT_TRUE(structural_equal(substitute(e, x, make_int(5)), expected));
}

}  // namespace
}  // namespace tilec::ir

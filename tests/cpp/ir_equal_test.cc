#include <gtest/gtest.h>

#include <cmath>

#include "ir/equal.h"
#include "ir/ir.h"

namespace tilec::ir {
namespace {

Expr i32(int64_t v) { return make_int(v); }

TEST(StructuralEqual, Expressions) {
  Expr x = make_var("x"), y = make_var("y");
  EXPECT_TRUE(structural_equal(make_Add(x, i32(1)), make_Add(x, i32(1))));
  EXPECT_FALSE(structural_equal(make_Add(x, i32(1)), make_Add(x, i32(2))));
  EXPECT_FALSE(structural_equal(make_Add(x, i32(1)), make_Sub(x, i32(1))));
  EXPECT_FALSE(structural_equal(make_Add(x, y), make_Add(y, x)));
  EXPECT_FALSE(structural_equal(i32(1), make_int(1, DType::Int64)));
  EXPECT_FALSE(structural_equal(make_var("x"), make_var("x")));  // distinct free vars
  EXPECT_TRUE(structural_equal(Expr(), Expr()));
  EXPECT_FALSE(structural_equal(x, Expr()));
  EXPECT_TRUE(structural_equal(make_call(DType::Float32, "exp", {make_float(1)}),
                               make_call(DType::Float32, "exp", {make_float(1)})));
  EXPECT_FALSE(structural_equal(make_call(DType::Float32, "exp", {make_float(1)}),
                                make_call(DType::Float32, "log", {make_float(1)})));
  EXPECT_FALSE(structural_equal(make_cast(DType::Float32, x), make_cast(DType::Float16, x)));
}

TEST(StructuralEqual, FloatImmediates) {
  EXPECT_TRUE(structural_equal(make_float(std::nan("")), make_float(std::nan(""))));
  EXPECT_FALSE(structural_equal(make_float(0.0), make_float(-0.0)));
  EXPECT_FALSE(structural_equal(make_float(1.0), make_float(1.0, DType::Float64)));
  EXPECT_FALSE(structural_equal(make_float(std::nan("")), make_float(1.0)));
}

TEST(StructuralEqual, FreeVarsMappedOnRequest) {
  Expr x = make_var("x"), y = make_var("y"), a = make_var("a"), b = make_var("b");
  EXPECT_TRUE(structural_equal(make_Add(x, y), make_Add(a, b), true));
  EXPECT_TRUE(structural_equal(make_Add(x, x), make_Add(a, a), true));
  EXPECT_FALSE(structural_equal(make_Add(x, x), make_Add(a, b), true));  // one-to-one
  EXPECT_FALSE(structural_equal(make_Add(x, y), make_Add(a, a), true));
  EXPECT_FALSE(structural_equal(x, make_var("x", DType::Int64), true));
}

TEST(StructuralEqual, DefinedVarsMatchByPosition) {
  Buffer buf = make_buffer("A", DType::Int32, {i32(16)}, {}, MemoryScope::Local);
  auto loop = [&](const char* name, const char* let_name) {
    Expr i = make_var(name), v = make_var(let_name);
    return make_for(i, i32(0), i32(16), ForKind::Serial,
                    make_let(v, make_Mul(i, i32(2)), make_store(buf, {i}, v)));
  };
  EXPECT_TRUE(structural_equal(loop("i", "v"), loop("j", "w")));

  // The same loop, but storing the loop var instead of the let var.
  Expr i = make_var("i"), v = make_var("v");
  Stmt swapped = make_for(i, i32(0), i32(16), ForKind::Serial,
                          make_let(v, make_Mul(i, i32(2)), make_store(buf, {i}, i)));
  EXPECT_FALSE(structural_equal(loop("i", "v"), swapped));

  // A body using a free var where the other uses its loop var.
  Expr j = make_var("j"), free = make_var("f");
  Stmt uses_loop = make_for(j, i32(0), i32(4), ForKind::Serial, make_evaluate(j));
  Stmt uses_free = make_for(j, i32(0), i32(4), ForKind::Serial, make_evaluate(free));
  EXPECT_FALSE(structural_equal(uses_loop, uses_free));
  Stmt j_loop = make_for(free, i32(0), i32(4), ForKind::Serial, make_evaluate(j));
  EXPECT_FALSE(structural_equal(uses_loop, j_loop));
}

TEST(StructuralEqual, BlockVarsAndLoopAttributes) {
  auto kernel = [](int threads, ForKind kind) {
    Expr bx = make_var("bx"), k = make_var("k");
    auto launch = std::make_shared<KernelLaunch>();
    launch->grid = {i32(4)};
    launch->block_vars = {bx};
    launch->threads = threads;
    launch->body = make_for(k, i32(0), i32(8), kind, make_evaluate(make_Add(bx, k)), 2);
    return Stmt(launch);
  };
  EXPECT_TRUE(structural_equal(kernel(128, ForKind::Pipelined), kernel(128, ForKind::Pipelined)));
  EXPECT_FALSE(structural_equal(kernel(128, ForKind::Pipelined), kernel(256, ForKind::Pipelined)));
  EXPECT_FALSE(structural_equal(kernel(128, ForKind::Pipelined), kernel(128, ForKind::Serial)));
}

TEST(StructuralEqual, BuffersByNameDtypeShapeScope) {
  auto fill = [](Buffer b) {
    auto f = std::make_shared<Fill>();
    f->dst = {b, {{i32(0), i32(8)}}};
    f->value = make_float(0);
    return Stmt(f);
  };
  auto buf = [](const char* name, DType t, int64_t n, MemoryScope scope) {
    return make_buffer(name, t, {i32(n)}, {}, scope);
  };
  Stmt base = fill(buf("A", DType::Float32, 8, MemoryScope::Shared));
  EXPECT_TRUE(structural_equal(base, fill(buf("A", DType::Float32, 8, MemoryScope::Shared))));
  EXPECT_FALSE(structural_equal(base, fill(buf("B", DType::Float32, 8, MemoryScope::Shared))));
  EXPECT_FALSE(structural_equal(base, fill(buf("A", DType::Float16, 8, MemoryScope::Shared))));
  EXPECT_FALSE(structural_equal(base, fill(buf("A", DType::Float32, 9, MemoryScope::Shared))));
  EXPECT_FALSE(structural_equal(base, fill(buf("A", DType::Float32, 8, MemoryScope::Local))));
}

TEST(StructuralEqual, TileOpFlags) {
  Buffer a = make_buffer("A", DType::Float32, {i32(16), i32(16)}, {}, MemoryScope::Fragment);
  BufferRegion r{a, {{i32(0), i32(16)}, {i32(0), i32(16)}}};
  auto gemm = [&](bool ta) {
    auto g = std::make_shared<Gemm>();
    g->a = g->b = g->c = r;
    g->transpose_a = ta;
    return Stmt(g);
  };
  EXPECT_TRUE(structural_equal(gemm(true), gemm(true)));
  EXPECT_FALSE(structural_equal(gemm(true), gemm(false)));
  auto reduce = [&](ReduceKind kind, int dim) {
    auto red = std::make_shared<Reduce>();
    red->reduce_kind = kind;
    red->src = r;
    red->dst = {a, {{i32(0), i32(16)}, {i32(0), i32(1)}}};
    red->dim = dim;
    return Stmt(red);
  };
  EXPECT_TRUE(structural_equal(reduce(ReduceKind::Sum, 1), reduce(ReduceKind::Sum, 1)));
  EXPECT_FALSE(structural_equal(reduce(ReduceKind::Sum, 1), reduce(ReduceKind::Max, 1)));
  EXPECT_FALSE(structural_equal(reduce(ReduceKind::Sum, 1), reduce(ReduceKind::Sum, 0)));
  auto cumsum = [&](int dim, bool reverse) {
    auto scan = std::make_shared<CumSum>();
    scan->src = scan->dst = r;
    scan->dim = dim;
    scan->reverse = reverse;
    return Stmt(scan);
  };
  EXPECT_TRUE(structural_equal(cumsum(1, true), cumsum(1, true)));
  EXPECT_FALSE(structural_equal(cumsum(1, true), cumsum(0, true)));
  EXPECT_FALSE(structural_equal(cumsum(1, true), cumsum(1, false)));
  Stmt seq = make_seq({gemm(true), reduce(ReduceKind::Sum, 1)});
  EXPECT_TRUE(structural_equal(seq, make_seq({gemm(true), reduce(ReduceKind::Sum, 1)})));
  EXPECT_FALSE(structural_equal(seq, make_seq({reduce(ReduceKind::Sum, 1), gemm(true)})));
  EXPECT_FALSE(structural_equal(seq, gemm(true)));
}

}  // namespace
}  // namespace tilec::ir

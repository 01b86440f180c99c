#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "ir/intrinsics.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "ir/shared_layout.h"

namespace tilec::ir {
namespace {

Expr i32(int64_t v) { return make_int(v); }

BufferRegion region(const Buffer& b, std::vector<Range> ranges) { return {b, std::move(ranges)}; }

Range full(int64_t n) { return {i32(0), i32(n)}; }

TEST(IRPrinter, Immediates) {
  EXPECT_EQ(to_string(i32(3)), "3");
  EXPECT_EQ(to_string(i32(-3)), "-3");
  EXPECT_EQ(to_string(make_int(3, DType::Int64)), "T.int64(3)");
  EXPECT_EQ(to_string(make_int(-1, DType::UInt64)), "T.uint64(18446744073709551615)");
  EXPECT_EQ(to_string(make_bool(true)), "True");
  EXPECT_EQ(to_string(make_bool(false)), "False");
  EXPECT_EQ(to_string(make_float(1.5)), "1.5");
  EXPECT_EQ(to_string(make_float(1.0)), "1.0");
  EXPECT_EQ(to_string(make_float(-0.0)), "-0.0");
  EXPECT_EQ(to_string(make_float(0.1f)), "0.1");
  EXPECT_EQ(to_string(make_float(100000.0)), "100000.0");
  EXPECT_EQ(to_string(make_float(1e20)), "1e+20");
  EXPECT_EQ(to_string(make_float(3.4028234663852886e38)), "3.4028235e+38");
  EXPECT_EQ(to_string(make_float(1.0 / 3, DType::Float64)), "T.float64(0.3333333333333333)");
  EXPECT_EQ(to_string(make_float(1.5, DType::Float16)), "T.float16(1.5)");
  double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(to_string(make_float(inf)), "T.infinity(\"float32\")");
  EXPECT_EQ(to_string(make_float(-inf, DType::Float16)), "-T.infinity(\"float16\")");
  EXPECT_EQ(to_string(make_float(std::nan(""))), "T.nan(\"float32\")");
}

TEST(IRPrinter, FloatsRoundTrip) {
  for (float f : {0.1f, 1.0f / 3, 3.14159265f, 1e-7f, 123456.789f, 16777217.0f}) {
    std::string s = to_string(make_float(f));
    EXPECT_EQ(std::strtof(s.c_str(), nullptr), f) << s;
  }
  for (double d : {0.1, 1.0 / 3, 2.0 / 7, 1e-300, 9007199254740993.0}) {
    std::string s = to_string(make_float(d, DType::Float64));
    s = s.substr(std::string("T.float64(").size());
    EXPECT_EQ(std::strtod(s.c_str(), nullptr), d) << s;
  }
}

TEST(IRPrinter, MinimalParentheses) {
  Expr x = make_var("x"), y = make_var("y"), z = make_var("z");
  EXPECT_EQ(to_string(make_Add(make_Add(x, y), z)), "x + y + z");
  EXPECT_EQ(to_string(make_Add(x, make_Add(y, z))), "x + (y + z)");
  EXPECT_EQ(to_string(make_Sub(x, make_Sub(y, z))), "x - (y - z)");
  EXPECT_EQ(to_string(make_Mul(make_Add(x, y), z)), "(x + y) * z");
  EXPECT_EQ(to_string(make_Add(make_Mul(x, y), z)), "x * y + z");
  EXPECT_EQ(to_string(make_FloorDiv(x, make_Mul(y, z))), "x // (y * z)");
  EXPECT_EQ(to_string(make_FloorMod(make_FloorDiv(x, y), z)), "x // y % z");
  EXPECT_EQ(to_string(make_Sub(x, i32(-3))), "x - -3");
  EXPECT_EQ(to_string(make_Div(x, y)), "x / y");
  // ^ binds looser than + and tighter than comparisons, as in Python.
  EXPECT_EQ(to_string(make_BitXor(make_Add(x, y), z)), "x + y ^ z");
  EXPECT_EQ(to_string(make_Mul(make_BitXor(x, y), z)), "(x ^ y) * z");
  EXPECT_EQ(to_string(make_BitXor(x, make_BitXor(y, z))), "x ^ (y ^ z)");
  EXPECT_EQ(to_string(make_LT(make_BitXor(x, y), z)), "x ^ y < z");
  // | looser than ^, looser than &, looser than shifts, looser than +, as in Python.
  EXPECT_EQ(to_string(make_BitOr(make_BitXor(x, y), make_BitAnd(y, z))), "x ^ y | y & z");
  EXPECT_EQ(to_string(make_BitAnd(make_BitOr(x, y), z)), "(x | y) & z");
  EXPECT_EQ(to_string(make_ShiftLeft(make_Add(x, y), z)), "x + y << z");
  EXPECT_EQ(to_string(make_BitAnd(make_ShiftRight(x, y), z)), "x >> y & z");
  EXPECT_EQ(to_string(make_ShiftRight(x, make_BitAnd(y, z))), "x >> (y & z)");
  EXPECT_EQ(to_string(make_LT(make_Add(x, y), z)), "x + y < z");
  EXPECT_EQ(to_string(make_EQ(make_LT(x, y), make_bool(true))), "(x < y) == True");
  Expr c1 = make_LT(x, y), c2 = make_GE(y, z), c3 = make_NE(x, z);
  EXPECT_EQ(to_string(make_Or(make_And(c1, c2), c3)), "x < y and y >= z or x != z");
  EXPECT_EQ(to_string(make_And(make_Or(c1, c2), c3)), "(x < y or y >= z) and x != z");
  EXPECT_EQ(to_string(make_not(make_And(c1, c2))), "not (x < y and y >= z)");
  EXPECT_EQ(to_string(make_And(make_not(c1), c2)), "not x < y and y >= z");
  EXPECT_EQ(to_string(make_Min(make_Add(x, y), make_Max(y, z))), "T.min(x + y, T.max(y, z))");
  EXPECT_EQ(to_string(make_select(c1, x, y)), "T.if_then_else(x < y, x, y)");
  Expr f = make_var("f", DType::Float32);
  EXPECT_EQ(to_string(make_cast(DType::Float32, x)), "T.cast(x, \"float32\")");
  EXPECT_EQ(to_string(make_call(DType::Float32, "exp", {make_Mul(f, make_float(2.0))})),
            "T.exp(f * 2.0)");
  EXPECT_EQ(to_string(make_Mul(f, make_float(-2.5))), "f * -2.5");
  EXPECT_EQ(to_string(make_call(DType::Float32, "pow", {f, make_float(0.5)})), "T.pow(f, 0.5)");
}

TEST(IRPrinter, Intrinsics) {
  Expr f = make_var("f", DType::Float32);
  int count = 0;
#define TILEC_CHECK_INTRINSIC(n, args_n, bool_result, floats_only)                                \
  {                                                                                               \
    const IntrinsicInfo* info = find_intrinsic(#n);                                               \
    ASSERT_NE(info, nullptr);                                                                     \
    EXPECT_EQ(info->arity, args_n);                                                               \
    EXPECT_EQ(info->returns_bool, bool_result);                                                   \
    EXPECT_EQ(info->float_only, floats_only);                                                     \
    std::vector<Expr> args(args_n, f);                                                            \
    DType t = bool_result ? DType::Bool : DType::Float32;                                         \
    EXPECT_EQ(to_string(make_call(t, #n, args)), args_n == 1 ? "T." #n "(f)" : "T." #n "(f, f)"); \
    ++count;                                                                                      \
  }
  TILEC_FOR_EACH_INTRINSIC(TILEC_CHECK_INTRINSIC)
#undef TILEC_CHECK_INTRINSIC
  EXPECT_EQ(count, 24);
  EXPECT_FALSE(find_intrinsic("fabs"));
  EXPECT_FALSE(find_intrinsic(""));
  EXPECT_FALSE(find_intrinsic("exp "));
  EXPECT_FALSE(find_intrinsic("abs")->float_only);
  EXPECT_TRUE(find_intrinsic("isfinite")->returns_bool);
}

TEST(IRPrinter, SameNamedVarsGetUniqueNames) {
  Expr a = make_var("k"), b = make_var("k"), c = make_var("k_1");
  EXPECT_EQ(to_string(make_Add(make_Add(a, b), make_Add(a, c))), "k + k_1 + (k + k_1_1)");
  Expr empty = make_var("");
  EXPECT_EQ(to_string(make_Mul(empty, empty)), "v * v");
}

TEST(IRPrinter, LoadsStoresAndStatements) {
  Buffer a = make_buffer("A", DType::Float32, {i32(4), i32(8)}, {}, MemoryScope::Local);
  Expr i = make_var("i"), j = make_var("j");
  Stmt store = make_store(a, {i, make_Add(j, i32(1))}, make_load(a, {j, i}));
  EXPECT_EQ(to_string(store), "A[i, j + 1] = A[j, i]\n");
  EXPECT_EQ(to_string(make_evaluate(i)), "T.evaluate(i)\n");
  Stmt loop = make_for(i, i32(2), i32(8), ForKind::Serial, store);
  EXPECT_EQ(to_string(loop), "for i in T.serial(2, 10):\n    A[i, j + 1] = A[j, i]\n");
  Expr n = make_var("n");
  Stmt sym = make_for(i, n, make_Mul(n, i32(2)), ForKind::Unrolled, make_seq({}));
  EXPECT_EQ(to_string(sym), "for i in T.unroll(n, n + n * 2):\n    pass\n");
  std::ostringstream os;
  os << make_Add(i, j) << " | " << make_evaluate(j);
  EXPECT_EQ(os.str(), "i + j | T.evaluate(j)\n");
  EXPECT_EQ(to_string(Stmt()), "");
  EXPECT_EQ(to_string(Expr()), "None");
}

TEST(IRPrinter, SharedBuffersShowTheirLayout) {
  auto laid_out = [](SharedLayoutRef layout) {
    auto b = std::make_shared<BufferNode>(*make_buffer("A_s", DType::Float16, {i32(8), i32(64)}, {}, MemoryScope::Shared));
    b->layout = std::move(layout);
    return to_string(make_allocate(Buffer(b), make_store(Buffer(b), {i32(0), i32(0)}, make_float(0, DType::Float16))));
  };
  Expr i = make_var("i"), j = make_var("j");
  EXPECT_EQ(laid_out(SharedLayout::user({8, 64}, {i, j}, make_Add(make_Mul(i, i32(64)), make_BitXor(j, make_Mul(i, i32(8)))))),
            "A_s = T.alloc_shared((8, 64), \"float16\")  # layout (i, j) -> i * 64 + (j ^ i * 8)\n"
            "A_s[0, 0] = T.float16(0.0)\n");
  EXPECT_NE(laid_out(SharedLayout::panels({8, 64}, 2, 128)).find("  # 128-byte panels\n"), std::string::npos);
  EXPECT_NE(laid_out(SharedLayout::mma_swizzle({8, 64}, 2)).find("  # swizzled\n"), std::string::npos);
  EXPECT_EQ(laid_out(nullptr).find('#'), std::string::npos);
}

TEST(IRPrinter, IfElifElse) {
  Expr x = make_var("x");
  Stmt s1 = make_evaluate(i32(1)), s2 = make_evaluate(i32(2)), s3 = make_evaluate(i32(3));
  Stmt chain = make_if(make_LT(x, i32(0)), s1, make_if(make_EQ(x, i32(0)), s2, s3));
  EXPECT_EQ(to_string(chain),
            "if x < 0:\n"
            "    T.evaluate(1)\n"
            "elif x == 0:\n"
            "    T.evaluate(2)\n"
            "else:\n"
            "    T.evaluate(3)\n");
  // An if nested inside a two-statement else stays nested.
  Stmt nested = make_if(make_GT(x, i32(0)), s1, make_seq({make_if(make_GT(x, i32(1)), s2), s3}));
  EXPECT_EQ(to_string(nested),
            "if x > 0:\n"
            "    T.evaluate(1)\n"
            "else:\n"
            "    if x > 1:\n"
            "        T.evaluate(2)\n"
            "    T.evaluate(3)\n");
}

// A small GEMM-like kernel with every statement kind, tile op and loop kind.
PrimFunc sample_func() {
  Expr m = make_var("M");
  Buffer a = make_buffer("A", DType::Float16, {m, i32(1024)}, {}, MemoryScope::Global);
  Buffer b = make_buffer("B", DType::Float16, {i32(1024), i32(1024)}, {}, MemoryScope::Global);
  Buffer c = make_buffer("C", DType::Float32, {m, i32(1024)}, {}, MemoryScope::Global);
  Buffer v = make_buffer("V", DType::Float32, {i32(1024)}, {}, MemoryScope::Global);
  Expr alpha = make_var("alpha", DType::Float32);
  Buffer a_s = make_buffer("A_shared", DType::Float16, {i32(32), i32(32)}, {}, MemoryScope::Shared);
  Buffer b_s = make_buffer("B_shared", DType::Float16, {i32(32), i32(32)}, {}, MemoryScope::Shared);
  Buffer c_l =
      make_buffer("C_local", DType::Float32, {i32(32), i32(32)}, {}, MemoryScope::Fragment);
  Buffer row = make_buffer("row", DType::Float32, {i32(32)}, {}, MemoryScope::Local);
  Buffer shadow = make_buffer("row", DType::Float32, {i32(1)}, {}, MemoryScope::Local);
  Expr bx = make_var("bx"), by = make_var("by");
  Expr k = make_var("k"), k2 = make_var("k"), i = make_var("i"), j = make_var("j");
  Expr x = make_var("x"), w = make_var("w");
  Expr xf = make_cast(DType::Float32, x);

  auto tile = [&](const Buffer& buf, Expr r, Expr col) {
    return region(buf, {{make_Mul(r, i32(32)), i32(32)}, {make_Mul(col, i32(32)), i32(32)}});
  };
  auto whole = [&](const Buffer& buf) { return region(buf, {full(32), full(32)}); };

  auto fill = std::make_shared<Fill>();
  fill->dst = whole(c_l);
  fill->value = make_float(0.0);
  auto copy_a = std::make_shared<Copy>();
  copy_a->src = tile(a, by, k);
  copy_a->dst = whole(a_s);
  auto copy_b = std::make_shared<Copy>();
  copy_b->src = tile(b, k, bx);
  copy_b->dst = whole(b_s);
  auto gemm = std::make_shared<Gemm>();
  gemm->a = whole(a_s);
  gemm->b = whole(b_s);
  gemm->c = whole(c_l);
  gemm->transpose_b = true;
  Stmt pipelined = make_for(k, i32(0), i32(32), ForKind::Pipelined,
                            make_seq({Stmt(copy_a), Stmt(copy_b), Stmt(gemm)}), 3);

  auto reduce = std::make_shared<Reduce>();
  reduce->reduce_kind = ReduceKind::AbsMax;
  reduce->src = whole(c_l);
  reduce->dst = region(row, {full(32)});
  reduce->dim = 1;
  reduce->clear = false;
  auto gemv = std::make_shared<Gemv>();
  gemv->a = whole(c_l);
  gemv->x = region(row, {full(32)});
  gemv->y = region(v, {{make_Mul(bx, i32(32)), i32(32)}});
  gemv->accumulate = true;
  auto cumsum = std::make_shared<CumSum>();
  cumsum->src = cumsum->dst = whole(c_l);
  cumsum->dim = 1;
  cumsum->reverse = true;

  Expr cij = make_load(c_l, {i, j});
  Stmt scale = make_store(c_l, {i, j}, make_Mul(cij, alpha));
  Stmt vec = make_for(j, i32(0), i32(32), ForKind::Vectorized, scale);
  Stmt par = make_for(i, i32(0), i32(32), ForKind::Parallel, vec);

  auto atomic_scalar = std::make_shared<AtomicAdd>();
  atomic_scalar->dst =
      region(c, {{make_Add(make_Mul(by, i32(32)), k2), i32(1)}, {make_Mul(bx, i32(32)), i32(1)}});
  atomic_scalar->value = make_load(row, {k2});
  Stmt unrolled = make_for(k2, i32(1), i32(31), ForKind::Unrolled, Stmt(atomic_scalar));
  auto atomic_region = std::make_shared<AtomicAdd>();
  atomic_region->dst = tile(c, by, bx);
  atomic_region->src = whole(c_l);

  Stmt branch =
      make_if(make_And(make_LT(bx, i32(2)), make_not(make_EQ(by, i32(0)))), Stmt(atomic_region),
              make_if(make_EQ(bx, i32(2)), make_store(row, {i32(0)}, make_float(-1.5)),
                      make_evaluate(make_call(DType::Float32, "exp", {xf}))));
  Stmt let = make_let(
      x, make_FloorDiv(make_Add(bx, i32(1)), i32(2)),
      make_seq({make_while(make_LT(w, i32(4)), make_store(shadow, {i32(0)}, xf)), branch}));
  Stmt inner = make_allocate(shadow, let);
  Stmt body = make_seq({Stmt(fill), pipelined, Stmt(reduce), Stmt(gemv), Stmt(cumsum), par, unrolled, inner});
  body = make_allocate(a_s, make_allocate(b_s, make_allocate(c_l, make_allocate(row, body))));

  auto launch = std::make_shared<KernelLaunch>();
  launch->grid = {make_FloorDiv(make_Add(m, i32(31)), i32(32)), i32(32)};
  launch->block_vars = {bx, by};
  launch->threads = 128;
  launch->body = body;

  PrimFunc f;
  f.name = "main";
  f.params = {{"A", a, Expr(), {}},
              {"B", b, Expr(), {}},
              {"C", c, Expr(), {}},
              {"V", v, Expr(), {}},
              {"alpha", nullptr, alpha, {}}};
  f.out_idx = {2};
  f.body = Stmt(launch);
  return f;
}

TEST(IRPrinter, GoldenPrimFunc) {
  const char* expected = R"(@T.prim_func(out_idx=[2])
def main(A: T.Tensor((M, 1024), "float16"), B: T.Tensor((1024, 1024), "float16"), C: T.Tensor((M, 1024), "float32"), V: T.Tensor((1024,), "float32"), alpha: T.float32):
    with T.Kernel((M + 31) // 32, 32, threads=128) as (bx, by):
        A_shared = T.alloc_shared((32, 32), "float16")
        B_shared = T.alloc_shared((32, 32), "float16")
        C_local = T.alloc_fragment((32, 32), "float32")
        row = T.alloc_local((32,), "float32")
        T.fill(C_local[0:32, 0:32], 0.0)
        for k in T.Pipelined(32, num_stages=3):
            T.copy(A[by * 32:by * 32 + 32, k * 32:k * 32 + 32], A_shared[0:32, 0:32])
            T.copy(B[k * 32:k * 32 + 32, bx * 32:bx * 32 + 32], B_shared[0:32, 0:32])
            T.gemm(A_shared[0:32, 0:32], B_shared[0:32, 0:32], C_local[0:32, 0:32], transpose_B=True)
        T.reduce_absmax(C_local[0:32, 0:32], row[0:32], dim=1, clear=False)
        T.gemv(C_local[0:32, 0:32], row[0:32], V[bx * 32:bx * 32 + 32], accumulate=True)
        T.cumsum(C_local[0:32, 0:32], C_local[0:32, 0:32], dim=1, reverse=True)
        for i in T.Parallel(32):
            for j in T.vectorized(32):
                C_local[i, j] = C_local[i, j] * alpha
        for k_1 in T.unroll(1, 32):
            T.atomic_add(C[by * 32 + k_1, bx * 32], row[k_1])
        row_1 = T.alloc_local((1,), "float32")
        x = (bx + 1) // 2
        while w < 4:
            row_1[0] = T.cast(x, "float32")
        if bx < 2 and not by == 0:
            T.atomic_add(C[by * 32:by * 32 + 32, bx * 32:bx * 32 + 32], C_local[0:32, 0:32])
        elif bx == 2:
            row[0] = -1.5
        else:
            T.evaluate(T.exp(T.cast(x, "float32")))
)";
  PrimFunc f = sample_func();
  EXPECT_EQ(to_string(f), expected);
  EXPECT_EQ(to_string(f), to_string(f));  // deterministic
}

}  // namespace
}  // namespace tilec::ir

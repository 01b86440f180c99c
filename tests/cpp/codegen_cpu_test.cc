// Tests of the CPU code generator: hand-built lowered kernels are printed, the
// key lines checked (one kernel against a golden file), and every source is
// built with the host compiler, loaded and run on arrays laid out as
// make_kernel_abi says. TILEC_UPDATE_GOLDEN=1 rewrites the golden file.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../device/cpu/tilec_cpu.h"
#include "codegen/cpu/codegen_cpu.h"
#include "codegen/kernel_abi.h"
#include "ir/ir.h"
#include "target/target.h"

#ifndef TILEC_SOURCE_DIR
#error "TILEC_SOURCE_DIR must name the repository root"
#endif

namespace tilec::codegen {
namespace {

using namespace tilec::ir;

// ---------------------------------------------------------------- building IR

Expr operator+(Expr a, Expr b) { return make_Add(std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return make_Sub(std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return make_Mul(std::move(a), std::move(b)); }
Expr operator<(Expr a, Expr b) { return make_LT(std::move(a), std::move(b)); }
Expr i32(int64_t v) { return make_int(v); }
Expr i64(int64_t v) { return make_int(v, DType::Int64); }
Expr f32(double v) { return make_float(v); }

Buffer tensor(const std::string& name, DType t, std::vector<Expr> shape,
              std::vector<Expr> strides = {}) {
  return make_buffer(name, t, std::move(shape), std::move(strides), MemoryScope::Global);
}

Buffer on_chip(const std::string& name, DType t, std::vector<Expr> shape,
               MemoryScope scope = MemoryScope::Shared) {
  return make_buffer(name, t, std::move(shape), {}, scope);
}

Param param(const Buffer& b) { return Param{b->name, b, Expr(), {}}; }
Param param(const Expr& var) { return Param{var.as<Var>()->name, nullptr, var, {}}; }

Stmt launch(std::vector<Expr> grid, std::vector<Expr> vars, Stmt body) {
  auto s = std::make_shared<KernelLaunch>();
  s->grid = std::move(grid);
  s->block_vars = std::move(vars);
  s->body = std::move(body);
  return Stmt(s);
}

Stmt atomic_add(const Buffer& dst, std::vector<Expr> indices, Expr value) {
  auto s = std::make_shared<AtomicAdd>();
  s->dst.buffer = dst;
  for (Expr& i : indices) s->dst.region.push_back({std::move(i), i32(1)});
  s->value = std::move(value);
  return Stmt(s);
}

Stmt loop(const Expr& var, int64_t extent, ForKind kind, Stmt body) {
  return make_for(var, make_int(0, var->dtype), make_int(extent, var->dtype), kind,
                  std::move(body));
}

PrimFunc function(const std::string& name, std::vector<Param> params, Stmt body) {
  PrimFunc f;
  f.name = name;
  f.params = std::move(params);
  f.body = std::move(body);
  return f;
}

// ---------------------------------------------------------------- compile and run

// The generated source of `func`, built into a shared object and loaded.
class Kernel {
 public:
  explicit Kernel(const PrimFunc& func) : func_(func), abi_(make_kernel_abi(func)) {
    source = generate_cpu_source(func, abi_, parse_target("cpu", ""));
    char dir_template[] = "/tmp/tilec_codegen_cpu_XXXXXX";
    if (!mkdtemp(dir_template)) throw std::runtime_error("mkdtemp failed");
    dir_ = dir_template;
    std::ofstream(dir_ + "/kernel.cc") << source;
    const char* cxx = std::getenv("CXX");
    std::string command = std::string(cxx && *cxx ? cxx : "g++") +
                          " -O1 -fopenmp -fPIC -shared -std=c++17 -Wall -Wextra -Werror"
                          " -I" TILEC_SOURCE_DIR "/device " +
                          dir_ + "/kernel.cc -o " + dir_ + "/kernel.so > " + dir_ +
                          "/build.log 2>&1";
    if (std::system(command.c_str()) != 0) {
      std::stringstream log;
      log << std::ifstream(dir_ + "/build.log").rdbuf();
      throw std::runtime_error("build failed:\n" + log.str() + "\nsource:\n" + source);
    }
    void* handle = dlopen((dir_ + "/kernel.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) throw std::runtime_error(std::string("dlopen: ") + dlerror());
    entry_ = reinterpret_cast<Entry>(dlsym(handle, kernel_entry_name()));
    if (!entry_) throw std::runtime_error("no entry symbol");
  }
  // The object stays loaded: unloading it could unload libgomp under its own
  // idle worker threads.
  ~Kernel() {
    for (const char* file : {"/kernel.cc", "/kernel.so", "/build.log"})
      std::remove((dir_ + file).c_str());
    rmdir(dir_.c_str());
  }
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  // Calls the entry with tensors by param index and the value of every Var
  // that fills an int slot (symbolic dims, strides, integer scalars); float
  // scalars by param index.
  void run(const std::map<int, void*>& tensors, const std::vector<std::pair<Expr, int64_t>>& vars,
           const std::map<int, double>& floats = {}) const {
    std::vector<void*> t;
    for (int p : abi_.tensor_params) t.push_back(tensors.at(p));
    std::vector<int64_t> ints;
    for (const IntSlot& slot : abi_.int_slots) {
      auto it = std::find_if(vars.begin(), vars.end(),
                             [&](const auto& v) { return v.first.same_as(slot.var); });
      if (it == vars.end()) throw std::runtime_error("no value for an int slot");
      ints.push_back(it->second);
    }
    std::vector<double> fs;
    for (int p : abi_.float_params) fs.push_back(floats.at(p));
    entry_(t.data(), ints.data(), fs.data());
  }

  std::string source;

 private:
  using Entry = void (*)(void* const*, const int64_t*, const double*);
  PrimFunc func_;
  KernelAbi abi_;
  std::string dir_;
  Entry entry_ = nullptr;
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

#define EXPECT_HAS(text, part) \
  EXPECT_TRUE(contains(text, part)) << "missing: " << (part) << "\n" << (text)

std::string read_file(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

// ---------------------------------------------------------------- kernels

// C[r, c] = A[r, c] * alpha + B[r, c] over rows of a symbolic count `m`, in
// blocks of 16 rows; A is strided, B and C are contiguous.
struct Elementwise {
  Expr m = make_var("m");
  Expr a_stride0 = make_var("A_stride0", DType::Int64);
  Expr a_stride1 = make_var("A_stride1", DType::Int64);
  Expr alpha = make_var("alpha", DType::Float32);
  Buffer a = tensor("A", DType::Float32, {m, i32(64)}, {a_stride0, a_stride1});
  Buffer b = tensor("B", DType::Float32, {m, i32(64)}, {i64(64), i64(1)});
  Buffer c = tensor("C", DType::Float32, {m, i32(64)}, {i64(64), i64(1)});
  PrimFunc func;

  Elementwise() {
    auto file = std::make_shared<SourceFile>();
    file->name = "elementwise.py";
    file->first_line = 10;
    file->text =
        "def kernel(A, B, C, alpha):\n"
        "    with T.Kernel(T.ceildiv(m, 16)) as bx:\n"
        "        for i, j in T.Parallel(16, 64):\n"
        "            if bx * 16 + i < m:\n"
        "                C[bx * 16 + i, j] = A[bx * 16 + i, j] * alpha + B[bx * 16 + i, j]\n";
    auto at = [&](int line) { return SourceLoc{file, line, 1}; };
    Expr bx = make_var("bx"), i = make_var("i"), j = make_var("j");
    Expr row = bx * i32(16) + i;
    Stmt store = with_loc(
        make_store(c, {row, j},
                   make_load(a, {row, j}) * alpha + make_load(b, {row, j})),
        at(5));
    Stmt body = with_loc(
        loop(i, 16, ForKind::Parallel,
             with_loc(loop(j, 64, ForKind::Vectorized, with_loc(make_if(row < m, store), at(4))),
                      at(3))),
        at(3));
    Stmt kernel = with_loc(launch({make_FloorDiv(m + i32(15), i32(16))}, {bx}, body), at(2));
    func = function("elementwise", {param(a), param(b), param(c), param(alpha)}, kernel);
  }
};

TEST(CodegenCpu, ElementwiseMatchesGolden) {
  Elementwise k;
  std::string source = generate_cpu_source(k.func, make_kernel_abi(k.func), parse_target("cpu", ""));
  std::string path =
      std::string(TILEC_SOURCE_DIR) + "/tests/golden/codegen_cpu_elementwise.cc.golden";
  if (std::getenv("TILEC_UPDATE_GOLDEN")) std::ofstream(path) << source;
  EXPECT_EQ(source, read_file(path)) << "regenerate with TILEC_UPDATE_GOLDEN=1";
  EXPECT_HAS(source, "#include \"cpu/tilec_cpu.h\"");
  EXPECT_HAS(source, "extern \"C\" void tilec_kernel_entry(void* const* tensors, "
                     "const int64_t* ints, const double* floats) {");
  EXPECT_HAS(source, "float* __restrict__ A = static_cast<float*>(tensors[0]);");
  EXPECT_HAS(source, "const int32_t m = static_cast<int32_t>(ints[0]);");
  EXPECT_HAS(source, "const int64_t A_stride0 = ints[1];");
  EXPECT_HAS(source, "const float alpha = static_cast<float>(floats[0]);");
  EXPECT_HAS(source, "const int32_t bx_extent = ((m + 15) >> 4);");
  EXPECT_HAS(source, "#pragma omp parallel for schedule(static)");
  EXPECT_HAS(source, "#pragma omp simd");
  EXPECT_HAS(source, "A[(int64_t)(bx * 16 + i) * A_stride0 + (int64_t)j * A_stride1]");
  EXPECT_HAS(source, "B[(int64_t)(bx * 16 + i) * 64 + j]");
  EXPECT_HAS(source, "// elementwise.py:14: C[bx * 16 + i, j] =");
  // One comment for the two loops on line 12.
  EXPECT_EQ(source.find("elementwise.py:12:"), source.rfind("elementwise.py:12:"));
}

TEST(CodegenCpu, ElementwiseRuns) {
  Elementwise k;
  Kernel kernel(k.func);
  const int m = 37, ld = 40;  // A is column-major with a padded leading dim
  std::vector<float> a(64 * ld), b(m * 64), c(m * 64 + 64, -999.0f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 97) * 0.25f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 13) - 6.0f;
  kernel.run({{0, a.data()}, {1, b.data()}, {2, c.data()}},
             {{k.m, m}, {k.a_stride0, 1}, {k.a_stride1, ld}}, {{3, 1.5}});
  for (int r = 0; r < m; ++r)
    for (int col = 0; col < 64; ++col)
      ASSERT_EQ(c[r * 64 + col], a[col * ld + r] * 1.5f + b[r * 64 + col]) << r << ", " << col;
  for (int i = m * 64; i < m * 64 + 64; ++i) EXPECT_EQ(c[i], -999.0f) << "written past the end";
}

// Each block of 128 elements is reversed through a [4, 32] shared buffer.
TEST(CodegenCpu, SharedBufferAndVectorizedLoop) {
  Buffer a = tensor("A", DType::Float32, {i32(1024)}, {i64(1)});
  Buffer b = tensor("B", DType::Float32, {i32(1024)}, {i64(1)});
  Buffer s = on_chip("S", DType::Float32, {i32(4), i32(32)});
  Expr bx = make_var("bx"), r = make_var("r"), c = make_var("c");
  Expr flat = bx * i32(128) + r * i32(32) + c;
  Stmt fill = loop(r, 4, ForKind::Unrolled,
                   loop(c, 32, ForKind::Vectorized, make_store(s, {r, c}, make_load(a, {flat}))));
  Stmt drain = loop(r, 4, ForKind::Serial,
                    loop(c, 32, ForKind::Vectorized,
                         make_store(b, {flat}, make_load(s, {i32(3) - r, i32(31) - c}))));
  PrimFunc f = function("reverse", {param(a), param(b)},
                        launch({i32(8)}, {bx}, make_allocate(s, make_seq({fill, drain}))));
  Kernel kernel(f);
  EXPECT_HAS(kernel.source, "alignas(64) float S[128];");
  EXPECT_HAS(kernel.source, "#pragma GCC unroll 4");
  EXPECT_HAS(kernel.source, "#pragma omp simd");
  EXPECT_HAS(kernel.source, "S[r * 32 + c] = A[bx * 128 + r * 32 + c];");
  EXPECT_HAS(kernel.source, "S[(3 - r) * 32 + 31 - c]");
  std::vector<float> av(1024), bv(1024, -1.0f);
  for (int i = 0; i < 1024; ++i) av[i] = static_cast<float>(i);
  kernel.run({{0, av.data()}, {1, bv.data()}}, {});
  for (int i = 0; i < 1024; ++i) ASSERT_EQ(bv[i], av[(i / 128) * 128 + 127 - i % 128]) << i;
}

// Arithmetic on half, bfloat16 and float8 rounds after every operation.
TEST(CodegenCpu, SoftFloatArithmetic) {
  using tilec_rt::half;
  Expr n = make_var("n");
  Expr scale = make_var("scale", DType::Float16);
  Buffer a = tensor("A", DType::Float32, {n}, {i64(1)});
  Buffer o = tensor("O", DType::Float32, {i32(9), n});  // no strides: row-major
  Expr bx = make_var("bx");
  Expr x = make_load(a, {bx});
  Expr h = make_cast(DType::Float16, x);
  auto to_f32 = [](Expr e) { return make_cast(DType::Float32, std::move(e)); };
  Expr tiny = make_float(std::ldexp(1.0, -11), DType::Float16);
  Expr tenth = make_float(0.1, DType::Float16);
  std::vector<Expr> outs = {
      to_f32((h + tiny) - h),
      to_f32(make_cast(DType::BFloat16, x) * make_float(3.0, DType::BFloat16)),
      to_f32(make_FloorDiv(h, make_float(2.0, DType::Float16))),
      to_f32(make_FloorMod(h, make_float(2.0, DType::Float16))),
      to_f32(make_cast(DType::Float8E4M3, x)),
      to_f32(make_call(DType::Float16, "exp", {h})),
      to_f32(make_cast(DType::Float16, make_cast(DType::Int32, x) * i32(2049))),
      to_f32(make_select(h < tenth, tenth,
                         make_Max(h, make_float(-INFINITY, DType::Float16)))),
      to_f32(h * scale),
  };
  std::vector<Stmt> stores;
  for (size_t k = 0; k < outs.size(); ++k)
    stores.push_back(make_store(o, {i32(static_cast<int64_t>(k)), bx}, outs[k]));
  PrimFunc f = function("soft", {param(a), param(o), param(scale)},
                        launch({n}, {bx}, make_seq(stores)));
  Kernel kernel(f);
  EXPECT_HAS(kernel.source, "const tilec_rt::half scale = tilec_rt::half(floats[0]);");
  EXPECT_HAS(kernel.source, "tilec_rt::half(float(tilec_rt::half(float(tilec_rt::half(A[bx])) + "
                            "float(tilec_rt::half(0x1p-11f)))) - float(tilec_rt::half(A[bx])))");
  EXPECT_HAS(kernel.source, "tilec_rt::half(-std::numeric_limits<float>::infinity())");
  EXPECT_HAS(kernel.source, "tilec_rt::half(0x1.999999999999ap-4)");
  EXPECT_HAS(kernel.source, "const int64_t O_stride0 = (int64_t)n;");

  const std::vector<float> in = {1.0f, 3.0f, -2.5f, 1000.0f};
  const int count = static_cast<int>(in.size());
  std::vector<float> out(9 * count, -999.0f);
  kernel.run({{0, const_cast<float*>(in.data())}, {1, out.data()}}, {{n, count}}, {{2, 0.5}});
  auto at = [&](int k, int i) { return out[k * count + i]; };
  const float hten = float(half(0.1));
  for (int i = 0; i < count; ++i) {
    SCOPED_TRACE(in[i]);
    float hx = float(half(in[i]));
    EXPECT_EQ(at(0, i), 0.0f);  // 2^-11 is lost when added to a half
    EXPECT_EQ(at(2, i), std::floor(hx / 2));
    EXPECT_EQ(at(3, i), hx - 2 * std::floor(hx / 2));
    EXPECT_EQ(at(5, i), float(half(std::exp(hx))));
    EXPECT_EQ(at(7, i), hx < hten ? hten : hx);
    EXPECT_EQ(at(8, i), hx * 0.5f);
  }
  EXPECT_EQ(at(1, 3), 3008.0f);  // bfloat16(3000) ties to even
  EXPECT_EQ(at(1, 2), -7.5f);
  EXPECT_EQ(at(4, 2), -2.5f);
  EXPECT_TRUE(std::isnan(at(4, 3)));  // e4m3fn has no infinity
  EXPECT_EQ(at(6, 0), 2048.0f);       // 2049 ties to even, rounded once from the int
  EXPECT_EQ(at(6, 1), 6148.0f);
  EXPECT_EQ(at(6, 2), -4096.0f);
  EXPECT_TRUE(std::isinf(at(6, 3)));
  EXPECT_TRUE(std::isinf(at(5, 3)));
  EXPECT_EQ(at(7, 2), hten);
}

// Python's // and % on negative ints, truncating Div, wrapping narrow ints and
// literals at the edges of their types.
TEST(CodegenCpu, IntegerSemantics) {
  Expr n = make_var("n");
  Buffer a = tensor("A", DType::Int32, {n}, {i64(1)});
  Buffer b = tensor("B", DType::Int32, {n}, {i64(1)});
  Buffer o = tensor("O", DType::Int32, {i32(7), n});
  Expr bx = make_var("bx");
  Expr x = make_load(a, {bx}), y = make_load(b, {bx});
  Expr x64 = make_cast(DType::Int64, x);
  Expr big = i64(int64_t{1} << 32);
  auto u16 = [](Expr e) { return make_cast(DType::UInt16, std::move(e)); };
  std::vector<Expr> outs = {
      make_FloorDiv(x, y),
      make_FloorMod(x, y),
      make_Div(x, y),
      make_cast(DType::Int32, make_cast(DType::Int8, x) + make_int(100, DType::Int8)),
      make_select(x < i32(0), make_Max(x, i32(INT32_MIN)), make_Min(x, y)),
      make_cast(DType::Int32, make_FloorDiv(x64 * big + make_Max(x64, i64(INT64_MIN)) - x64, big)),
      make_cast(DType::Int32, u16(x) * u16(y)),
  };
  std::vector<Stmt> stores;
  for (size_t k = 0; k < outs.size(); ++k)
    stores.push_back(make_store(o, {i32(static_cast<int64_t>(k)), bx}, outs[k]));
  PrimFunc f = function("ints", {param(a), param(b), param(o)},
                        launch({n}, {bx}, make_seq(stores)));
  Kernel kernel(f);
  EXPECT_HAS(kernel.source, "tilec_rt::floordiv(A[bx], B[bx])");
  EXPECT_HAS(kernel.source, "tilec_rt::max(A[bx], (-2147483647 - 1))");
  EXPECT_HAS(kernel.source, "static_cast<int8_t>(static_cast<int8_t>(A[bx]) + "
                            "static_cast<int8_t>(100))");
  EXPECT_HAS(kernel.source, "INT64_C(4294967296)");
  EXPECT_HAS(kernel.source, "INT64_MIN");

  std::vector<int32_t> av = {7, -7, 7, -7, 0, 100, -100, 300, -1};
  std::vector<int32_t> bv = {2, 2, -2, -2, 3, 7, 3, 300, 5};
  const int count = static_cast<int>(av.size());
  std::vector<int32_t> out(7 * count, -12345);
  kernel.run({{0, av.data()}, {1, bv.data()}, {2, out.data()}}, {{n, count}});
  for (int i = 0; i < count; ++i) {
    int32_t p = av[i], q = bv[i];
    int32_t fdiv = p / q - ((p % q != 0 && (p < 0) != (q < 0)) ? 1 : 0);
    SCOPED_TRACE(std::to_string(p) + ", " + std::to_string(q));
    EXPECT_EQ(out[0 * count + i], fdiv);
    EXPECT_EQ(out[1 * count + i], p - fdiv * q);
    EXPECT_EQ(out[2 * count + i], p / q);
    EXPECT_EQ(out[3 * count + i], static_cast<int8_t>(static_cast<int8_t>(p) + 100));
    EXPECT_EQ(out[4 * count + i], p < 0 ? p : std::min(p, q));
    EXPECT_EQ(out[5 * count + i], p);
    EXPECT_EQ(out[6 * count + i],
              static_cast<uint16_t>(uint32_t{static_cast<uint16_t>(p)} * static_cast<uint16_t>(q)));
  }
  EXPECT_EQ(out[1 * count + 1], 1);   // -7 % 2
  EXPECT_EQ(out[0 * count + 2], -4);  // 7 // -2
  EXPECT_EQ(out[6 * count + 7], 24464);
}

// 128 blocks of a 2-D grid add into one float and four int counters.
TEST(CodegenCpu, AtomicAddFromManyBlocks) {
  Buffer total = tensor("total", DType::Float32, {i32(1)}, {i64(1)});
  Buffer counts = tensor("counts", DType::Int32, {i32(4)}, {i64(1)});
  Expr bx = make_var("bx"), by = make_var("by"), t = make_var("t");
  Stmt body = make_seq({loop(t, 100, ForKind::Serial, atomic_add(total, {i32(0)}, f32(1.0))),
                        atomic_add(counts, {make_FloorMod(by, i32(4))}, i32(1))});
  PrimFunc f = function("atomics", {param(total), param(counts)},
                        launch({i32(16), i32(8)}, {bx, by}, body));
  Kernel kernel(f);
  EXPECT_HAS(kernel.source, "#pragma omp parallel for collapse(2) schedule(static)");
  EXPECT_HAS(kernel.source, "tilec_rt::atomic_add(&total[0], 0x1p+0f);");
  EXPECT_HAS(kernel.source, "tilec_rt::atomic_add(&counts[(by & 3)], 1);");
  EXPECT_LT(kernel.source.find("for (int32_t by = 0; by < 8; ++by)"),
            kernel.source.find("for (int32_t bx = 0; bx < 16; ++bx)"));
  float sum = 0.0f;
  std::vector<int32_t> c(4, 0);
  kernel.run({{0, &sum}, {1, c.data()}}, {});
  EXPECT_EQ(sum, 12800.0f);
  for (int v : c) EXPECT_EQ(v, 32);
}

// Collatz step counts with a While, an IfThenElse and a local buffer, then a
// second launch that reads the first one's output.
TEST(CodegenCpu, WhileIfAndTwoLaunches) {
  Expr n = make_var("n");
  Buffer a = tensor("A", DType::Int32, {n}, {i64(1)});
  Buffer o = tensor("O", DType::Int32, {n}, {i64(1)});
  Buffer o2 = tensor("O2", DType::Int32, {n}, {i64(1)});
  Buffer x = on_chip("x", DType::Int32, {i32(2)}, MemoryScope::Local);
  Expr bx = make_var("bx"), v = make_var("v");
  Expr cur = make_load(x, {i32(0)});
  Stmt step = make_seq({
      make_if(make_EQ(make_FloorMod(cur, i32(2)), i32(0)),
              make_store(x, {i32(0)}, make_FloorDiv(cur, i32(2))),
              make_store(x, {i32(0)}, cur * i32(3) + i32(1))),
      make_store(x, {i32(1)}, make_load(x, {i32(1)}) + i32(1)),
  });
  Stmt first = launch({n}, {bx},
                      make_allocate(x, make_let(v, make_load(a, {bx}), make_seq({
                          make_store(x, {i32(0)}, v),
                          make_store(x, {i32(1)}, i32(0)),
                          make_while(make_NE(cur, i32(1)), step),
                          make_store(o, {bx}, make_load(x, {i32(1)})),
                      }))));
  Expr bx2 = make_var("bx");
  Stmt second = launch({n}, {bx2}, make_store(o2, {bx2}, make_load(o, {bx2}) * i32(2)));
  PrimFunc f = function("collatz", {param(a), param(o), param(o2)}, make_seq({first, second}));
  Kernel kernel(f);
  EXPECT_HAS(kernel.source, "while (x[0] != 1) {");
  EXPECT_HAS(kernel.source, "} else {");
  EXPECT_HAS(kernel.source, "const int32_t v = A[bx];");
  EXPECT_HAS(kernel.source, "for (int32_t bx_1 = 0; bx_1 < n; ++bx_1)");
  std::vector<int32_t> av(30), out(30, -1), out2(30, -1);
  for (int i = 0; i < 30; ++i) av[i] = i + 1;
  kernel.run({{0, av.data()}, {1, out.data()}, {2, out2.data()}}, {{n, 30}});
  for (int i = 0; i < 30; ++i) {
    int64_t value = av[i], steps = 0;
    while (value != 1) {
      value = value % 2 == 0 ? value / 2 : 3 * value + 1;
      ++steps;
    }
    EXPECT_EQ(out[i], steps) << av[i];
    EXPECT_EQ(out2[i], 2 * steps) << av[i];
  }
}

// A 128 KiB buffer and a buffer of symbolic shape go to the heap; a small
// accumulator stays on the stack.
TEST(CodegenCpu, LargeAndSymbolicAllocationsUseTheHeap) {
  Expr n = make_var("n");
  Buffer a = tensor("A", DType::Float32, {n}, {i64(1)});
  Buffer o = tensor("O", DType::Float32, {i32(2), i32(4)});
  Buffer w = on_chip("W", DType::Float32, {i32(128), i32(256)});
  Buffer v = on_chip("V", DType::Float32, {i32(2), n});
  Buffer acc = on_chip("acc", DType::Float32, {i32(2)}, MemoryScope::Fragment);
  Expr bx = make_var("bx"), r = make_var("r"), c = make_var("c"), t = make_var("t");
  Expr fbx = make_cast(DType::Float32, bx);
  Stmt fill_w = loop(r, 128, ForKind::Serial,
                     loop(c, 256, ForKind::Serial,
                          make_store(w, {r, c}, make_cast(DType::Float32, r + c + bx))));
  Stmt sum_w = loop(r, 128, ForKind::Serial,
                    loop(c, 256, ForKind::Serial,
                         make_store(acc, {i32(0)},
                                    make_load(acc, {i32(0)}) + make_load(w, {r, c}))));
  Stmt fill_v = make_for(t, i32(0), n, ForKind::Serial,
                         make_seq({make_store(v, {i32(0), t}, make_load(a, {t}) * fbx),
                                   make_store(v, {i32(1), t}, make_load(a, {t}))}));
  Stmt sum_v = make_for(t, i32(0), n, ForKind::Serial,
                        make_store(acc, {i32(1)},
                                   make_load(acc, {i32(1)}) + make_load(v, {i32(0), t}) -
                                       make_load(v, {i32(1), t})));
  Stmt body = make_allocate(
      acc, make_allocate(
               w, make_allocate(
                      v, make_seq({make_store(acc, {i32(0)}, f32(0)),
                                   make_store(acc, {i32(1)}, f32(0)), fill_w, sum_w, fill_v, sum_v,
                                   make_store(o, {i32(0), bx}, make_load(acc, {i32(0)})),
                                   make_store(o, {i32(1), bx}, make_load(acc, {i32(1)}))}))));
  PrimFunc f = function("heap", {param(a), param(o)}, launch({i32(4)}, {bx}, body));
  Kernel kernel(f);
  EXPECT_HAS(kernel.source, "alignas(64) float acc[2];");
  EXPECT_HAS(kernel.source, "std::unique_ptr<float[]> W_storage(new float[32768]);");
  EXPECT_HAS(kernel.source, "float* const W = W_storage.get();");
  EXPECT_HAS(kernel.source, "const int64_t V_stride0 = (int64_t)n;");
  EXPECT_HAS(kernel.source, "std::unique_ptr<float[]> V_storage(new float[(int64_t)n * 2]);");
  EXPECT_HAS(kernel.source, "V[V_stride0 + t] = A[t];");
  std::vector<float> av(50), out(8, -1.0f);
  for (int i = 0; i < 50; ++i) av[i] = static_cast<float>(i);
  kernel.run({{0, av.data()}, {1, out.data()}}, {{n, 50}});
  for (int b = 0; b < 4; ++b) {
    EXPECT_EQ(out[b], 32768.0f * b + 6258688.0f) << b;
    EXPECT_EQ(out[4 + b], 1225.0f * (b - 1)) << b;
  }
}

// Names are sanitized and deduplicated; operators get the parentheses they need.
TEST(CodegenCpu, NamesAndExpressions) {
  Expr n = make_var("n");
  Buffer o = tensor("my-out", DType::Float64, {i32(8)}, {i64(1)});
  Buffer oi = tensor("ints", DType::Int64, {i32(4)}, {i64(1)});
  Buffer ob = tensor("flags", DType::Bool, {i32(2)}, {i64(1)});
  // Contiguous with a symbolic row length: `w` is both a dim and a stride slot.
  Expr w = make_var("w");
  Buffer g = tensor("G", DType::Int32, {i32(2), w}, {w, i64(1)});
  Expr k1 = make_var("k"), k2 = make_var("k"), kw = make_var("int"), us = make_var("__x");
  Expr bx = make_var("bx");
  Expr a = make_cast(DType::Float64, k1), b = make_cast(DType::Float64, k2);
  Expr c = make_float(0.1, DType::Float64);
  Stmt inner = make_seq({
      make_store(o, {i32(0)}, a - (b - c)),
      make_store(o, {i32(1)}, (a + b) * c),
      make_store(o, {i32(2)}, make_Div(a * b, c)),
      make_store(o, {i32(3)}, a * make_Div(b, c)),
      make_store(o, {i32(4)}, make_float(INFINITY, DType::Float64)),
      make_store(oi, {i32(0)}, make_cast(DType::Int64, kw) + i64(5)),
      make_store(oi, {i32(1)}, make_cast(DType::Int64, make_cast(DType::UInt32, us) +
                                                            make_int(5, DType::UInt32))),
      make_store(oi, {i32(2)}, make_cast(DType::Int64, make_cast(DType::UInt64, kw) +
                                                            make_int(-1, DType::UInt64))),
      make_store(o, {i32(5)}, make_cast(DType::Float64, make_float(1e39))),
      make_store(g, {i32(1), k2}, k2),
      make_evaluate(make_call(DType::Float64, "exp", {a})),
      make_evaluate(i32(0)),
      make_store(ob, {i32(0)}, make_not(k1 < k2)),
      make_store(ob, {i32(1)},
                 make_And(k1 < k2, make_Or(make_EQ(k1, i32(0)), make_EQ(k2, i32(1))))),
  });
  Stmt body = loop(k1, 2, ForKind::Serial,
                   make_for(k2, i32(1), n, ForKind::Serial,
                            make_let(kw, k1 + k2, make_let(us, kw * i32(2), inner))));
  PrimFunc f = function("names", {param(o), param(oi), param(ob), param(g), param(n)},
                        launch({i32(1)}, {bx}, body));
  Kernel kernel(f);
  const std::string& s = kernel.source;
  EXPECT_HAS(s, "double* __restrict__ my_out = static_cast<double*>(tensors[0]);");
  EXPECT_HAS(s, "int64_t* __restrict__ ints_ = static_cast<int64_t*>(tensors[1]);");
  EXPECT_HAS(s, "for (int32_t k = 0; k < 2; ++k)");
  EXPECT_HAS(s, "const int32_t k_1_end = 1 + n;");
  EXPECT_HAS(s, "for (int32_t k_1 = 1; k_1 < k_1_end; ++k_1)");
  EXPECT_HAS(s, "const int32_t int_ = k + k_1;");
  EXPECT_HAS(s, "const int32_t v_x = int_ * 2;");
  EXPECT_HAS(s, "static_cast<double>(k) - (static_cast<double>(k_1) - 0x1.999999999999ap-4)");
  EXPECT_HAS(s, "(static_cast<double>(k) + static_cast<double>(k_1)) * 0x1.999999999999ap-4");
  EXPECT_HAS(s, "static_cast<double>(k) * static_cast<double>(k_1) / 0x1.999999999999ap-4");
  EXPECT_HAS(s, "static_cast<double>(k) * (static_cast<double>(k_1) / 0x1.999999999999ap-4)");
  EXPECT_HAS(s, "std::numeric_limits<double>::infinity()");
  EXPECT_HAS(s, "static_cast<int64_t>(int_) + INT64_C(5)");
  EXPECT_HAS(s, "static_cast<uint32_t>(v_x) + 5u");
  EXPECT_HAS(s, "flags[0] = !(k < k_1);");
  EXPECT_HAS(s, "flags[1] = k < k_1 && (k == 0 || k_1 == 1);");
  EXPECT_HAS(s, "static_cast<uint64_t>(int_) + UINT64_C(18446744073709551615)");
  EXPECT_HAS(s, "static_cast<double>(std::numeric_limits<float>::infinity())");
  EXPECT_HAS(s, "G[static_cast<int64_t>(w) + k_1] = k_1;");
  EXPECT_EQ(s.find("const int32_t w ="), s.rfind("const int32_t w ="));
  EXPECT_HAS(s, "static_cast<void>(tilec_rt::exp(static_cast<double>(k)));");
  EXPECT_FALSE(contains(s, "static_cast<void>(0)"));
  std::vector<double> out(8, 0.0);
  std::vector<int64_t> iout(4, 0);
  bool flags[2] = {true, true};
  std::vector<int32_t> gv(2 * 5, -1);
  kernel.run({{0, out.data()}, {1, iout.data()}, {2, flags}, {3, gv.data()}}, {{n, 3}, {w, 5}});
  // The last iteration wins: k = 1, k_1 = 3.
  EXPECT_DOUBLE_EQ(out[0], 1 - (3 - 0.1));
  EXPECT_DOUBLE_EQ(out[3], 1 * (3 / 0.1));
  EXPECT_TRUE(std::isinf(out[4]));
  EXPECT_EQ(iout[0], 9);
  EXPECT_EQ(iout[1], 13);
  EXPECT_EQ(iout[2], 3);
  EXPECT_TRUE(std::isinf(out[5]));
  EXPECT_EQ(gv, (std::vector<int32_t>{-1, -1, -1, -1, -1, -1, 1, 2, 3, -1}));
  EXPECT_FALSE(flags[0]);
  EXPECT_FALSE(flags[1]);
}

TEST(CodegenCpu, UnloweredOpsAndUnknownCallsThrow) {
  Buffer a = tensor("A", DType::Float32, {i32(16)}, {i64(1)});
  Buffer s = on_chip("S", DType::Float32, {i32(16)});
  auto copy = std::make_shared<Copy>();
  copy->src = {a, {{i32(0), i32(16)}}};
  copy->dst = {s, {{i32(0), i32(16)}}};
  Expr bx = make_var("bx");
  PrimFunc f = function("stray", {param(a)},
                        launch({i32(1)}, {bx}, make_allocate(s, Stmt(copy))));
  try {
    generate_cpu_source(f, make_kernel_abi(f), parse_target("cpu", ""));
    FAIL() << "no error";
  } catch (const std::logic_error& e) {
    EXPECT_HAS(std::string(e.what()), "Copy");
  }
  auto tile_add = std::make_shared<AtomicAdd>();
  tile_add->dst = {a, {{i32(0), i32(16)}}};
  tile_add->src = {s, {{i32(0), i32(16)}}};
  PrimFunc g = function("stray", {param(a)},
                        launch({i32(1)}, {bx}, make_allocate(s, Stmt(tile_add))));
  EXPECT_THROW(generate_cpu_source(g, make_kernel_abi(g), parse_target("cpu", "")), std::logic_error);
  Expr unknown = make_call(DType::Float32, "frobnicate", {f32(1)});
  PrimFunc h = function("stray", {param(a)}, launch({i32(1)}, {bx}, make_store(a, {bx}, unknown)));
  EXPECT_THROW(generate_cpu_source(h, make_kernel_abi(h), parse_target("cpu", "")), std::logic_error);
}

}  // namespace
}  // namespace tilec::codegen

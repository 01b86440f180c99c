// Each tile op's layout constraints (op/layout_constraints.h), as its unit states them, and
// that layout inference lays fragments out to meet them for every kind in
// TILEC_FOR_EACH_TILE_OP: a new op's constraints are picked up without the pass changing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "frontend/elaborate.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "op/op.h"
#include "op/parallel.h"
#include "passes/gpu/select_instructions.h"
#include "passes/gpu/infer_layout.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

// `body` (8 space indent) in a kernel of 128 threads over X (float32, 64 x 32), with
// fragments of float32: f and g (64, 32), h (32, 64), v (64,), w (32,).
ir::PrimFunc kernel(const std::string& body) {
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(X: T.Tensor((64, 32), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        f = T.alloc_fragment((64, 32), \"float32\")\n"
      "        g = T.alloc_fragment((64, 32), \"float32\")\n"
      "        h = T.alloc_fragment((32, 64), \"float32\")\n"
      "        v = T.alloc_fragment((64,), \"float32\")\n"
      "        w = T.alloc_fragment((32,), \"float32\")\n" + body;
  return frontend::elaborate(load_function(source, "k.py", "main"));
}

// The statements of `body` that are tile ops or T.Parallel nests, in order.
std::vector<ir::Stmt> sites_of(const ir::Stmt& body) {
  struct Finder : ir::IRVisitor {
    std::vector<ir::Stmt> found;
    void visit(const ir::Stmt& s) override {
      if (s && (op::is_tile_op(s.kind()) || op::parallel_nest(s))) {
        found.push_back(s);
        return;
      }
      IRVisitor::visit(s);
    }
    using IRVisitor::visit;
  } finder;
  finder.visit(body);
  return finder.found;
}

op::LayoutConstraints constraints_of(const ir::Stmt& s) {
  if (auto nest = op::parallel_nest(s)) return op::layout_constraints(*nest);
  return op::layout_constraints_of(*s);
}

// "f:0,-1 g:0,-1 over (64)": a site's extents and its fragment accesses' dims.
std::string describe(const op::Site& site) {
  std::string text;
  for (const auto& a : site.accesses) {
    if (!op::is_fragment(a.buffer)) continue;
    text += a.buffer->name + ":";
    for (size_t d = 0; d < a.dims.size(); ++d) text += (d ? "," : "") + std::to_string(a.dims[d]);
    text += " ";
  }
  text += "over (";
  for (size_t k = 0; k < site.extents.size(); ++k) text += (k ? ", " : "") + std::to_string(site.extents[k]);
  return text + ")";
}

op::LayoutConstraints first_constraints(const std::string& body) {
  auto sites = sites_of(kernel(body).body);
  if (sites.empty()) throw std::logic_error("no tile op or T.Parallel nest");
  return constraints_of(sites[0]);
}

TEST(OpLayoutConstraints, ACopyBetweenFragmentsIsOneSiteOverBoth) {
  auto c = first_constraints("        T.copy(f, g)\n");
  ASSERT_EQ(c.sites.size(), 1u);
  EXPECT_EQ(describe(c.sites[0]), "f:0,1 g:0,1 over (64, 32)");
  EXPECT_TRUE(c.projections.empty() && c.replicated.empty());
  EXPECT_TRUE(first_constraints("        T.copy(X, X)\n").sites.empty());  // no fragment: none
}

TEST(OpLayoutConstraints, AReductionOfAFragmentProjectsItsLayout) {
  auto c = first_constraints("        T.reduce_max(f, w, dim=0)\n");
  ASSERT_EQ(c.projections.size(), 1u);
  EXPECT_EQ(c.projections[0].from->name, "f");
  EXPECT_EQ(c.projections[0].to->name, "w");
  EXPECT_EQ(c.projections[0].keep, std::vector<int>{1});
  EXPECT_TRUE(c.sites.empty());
}

TEST(OpLayoutConstraints, AGemvHoldsItsMatrixRowsAndVectorWhole) {
  auto c = first_constraints("        T.gemv(f, w, v)\n");
  ASSERT_EQ(c.sites.size(), 1u);
  EXPECT_EQ(describe(c.sites[0]), "v:0 f:0,-1 w:-1 over (64)");
}

TEST(OpLayoutConstraints, AScanHoldsItsLinesWhole) {
  EXPECT_EQ(describe(first_constraints("        T.cumsum(f, g, dim=1)\n").sites.at(0)), "f:0,-1 g:0,-1 over (64)");
  EXPECT_EQ(describe(first_constraints("        T.cumsum(h, dim=0)\n").sites.at(0)), "h:-1,0 h:-1,0 over (64)");
  auto line = first_constraints("        T.cumsum(w)\n");  // in place: w as src and as dst
  ASSERT_EQ(line.replicated.size(), 2u);
  EXPECT_EQ(line.replicated[0].first->name, "w");
  EXPECT_EQ(line.replicated[1].first->name, "w");
}

TEST(OpLayoutConstraints, AParallelNestIsOneSiteOverItsLoops) {
  auto c = first_constraints("        for i, j in T.Parallel(32, 64):\n"
                             "            h[i, j] = f[j, i] + v[j]\n");
  EXPECT_EQ(describe(c.sites.at(0)), "h:0,1 f:1,0 v:1 over (32, 64)");
}

TEST(ParallelNest, APureNamedValueIsPutInItsStoreAndAnyOtherKeptNamed) {
  // v = value; A[i] = v + v  (a T.Parallel body over i)
  ir::Expr i = ir::make_var("i"), v = ir::make_var("v", DType::Float32);
  ir::Buffer A = ir::make_buffer("A", DType::Float32, {ir::make_int(8)}, {}, ir::MemoryScope::Shared);
  auto body_of = [&](const ir::Expr& value) {
    return ir::make_let(v, value, ir::make_store(A, {i}, ir::make_Add(v, v)));
  };
  ir::Stmt pure = op::inline_pure_lets(body_of(ir::make_call(DType::Float32, "exp", {ir::make_load(A, {i})})));
  ASSERT_TRUE(pure.as<ir::BufferStore>());
  EXPECT_EQ(ir::to_string(pure), "A[i] = T.exp(A[i]) + T.exp(A[i])\n");
  // a call of the program's own (a side effect) is made once, under its name
  EXPECT_TRUE(op::inline_pure_lets(body_of(ir::make_call(DType::Float32, "next_ticket", {}))).as<ir::LetStmt>());
  // two stores: nothing to gain
  ir::Stmt two = ir::make_let(v, ir::make_load(A, {i}),
                              ir::make_seq({ir::make_store(A, {i}, v), ir::make_store(A, {i}, v)}));
  EXPECT_TRUE(op::inline_pure_lets(two).as<ir::LetStmt>());
}

// One op of each kind on fragments: a kind added to TILEC_FOR_EACH_TILE_OP without a
// sample here does not compile.
template <typename Op>
struct Sample;
template <>
struct Sample<ir::Copy> {
  static constexpr const char* body = "        T.copy(X, f)\n        T.copy(f, g)\n";
};
template <>
struct Sample<ir::Gemm> {
  // No tensor core reads a float32 A from registers: the gemm runs as element loops.
  static constexpr const char* body = "        T.gemm(f, h[0:32, 0:32], g)\n";
};
template <>
struct Sample<ir::Gemv> {
  static constexpr const char* body = "        T.gemv(f, w, v)\n";
};
template <>
struct Sample<ir::Fill> {
  static constexpr const char* body = "        T.fill(g, 2.0)\n";
};
template <>
struct Sample<ir::Reduce> {
  static constexpr const char* body = "        T.copy(X, f)\n        T.reduce_sum(f, v, dim=1)\n";
};
template <>
struct Sample<ir::CumSum> {
  static constexpr const char* body = "        T.copy(X, f)\n        T.cumsum(f, g, dim=1, reverse=True)\n";
};
template <>
struct Sample<ir::AtomicAdd> {
  static constexpr const char* body = "        T.atomic_add(X, g)\n";
};

struct KindSample {
  const char* kind;
  const char* body;
};
#define TILEC_SAMPLE(n) KindSample{#n, Sample<ir::n>::body},
constexpr KindSample kSamples[] = {TILEC_FOR_EACH_TILE_OP(TILEC_SAMPLE)};
#undef TILEC_SAMPLE

// What of `c` the layouts on `s`'s buffers (after inference) fail, or "".
std::string unmet(const op::LayoutConstraints& c) {
  auto layout_of = [](const ir::Buffer& b) { return b->fragment.get(); };
  for (const op::Site& site : c.sites) {
    auto layout = op::site_layout(site, layout_of);
    if (!layout) return "no layout for the site " + describe(site);
    for (const auto& a : site.accesses)
      if (op::is_fragment(a.buffer) && !op::owned_under(*a.buffer->fragment, a.dims, *layout))
        return "'" + a.buffer->name + "' (" + a.buffer->fragment->to_string() + ") is not where the site " +
               describe(site) + " runs its elements (" + layout->to_string() + ")";
  }
  for (const op::Projection& p : c.projections)
    if (*p.to->fragment != p.from->fragment->project(p.keep))
      return "'" + p.to->name + "' is not '" + p.from->name + "' projected";
  for (const auto& [b, loc] : c.replicated)
    if (!b->fragment->replicated()) return "'" + b->name + "' is not replicated";
  return "";
}

TEST(OpLayoutConstraints, InferenceMeetsEveryOpsConstraints) {
  for (const KindSample& sample : kSamples) {
    ir::PrimFunc f = kernel(sample.body);
    passes::PassContext ctx;
    ctx.target = parse_target("cuda", "sm_80");
    ctx.func = &f;
    f.body = passes::select_instructions(f.body, ctx);
    f.body = passes::infer_layout(f.body, ctx);
    bool found = false;
    for (const ir::Stmt& s : sites_of(f.body)) {
      found |= ir::kind_name(s.kind()) == std::string(sample.kind);
      op::LayoutConstraints c = constraints_of(s);
      EXPECT_FALSE(c.sites.empty() && c.projections.empty() && c.replicated.empty())
          << sample.kind << ": its sample constrains nothing\n" << ir::to_string(f);
      EXPECT_EQ(unmet(c), "") << sample.kind << "\n" << ir::to_string(f);
    }
    EXPECT_TRUE(found) << sample.kind;
  }
}

}  // namespace
}  // namespace tilec

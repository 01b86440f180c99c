// Each tile op's regions (op/op.h): what it reads and writes, and that the passes placing
// barriers take them from there, for every kind in TILEC_FOR_EACH_TILE_OP.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "frontend/elaborate.h"
#include "ir/mutator.h"
#include "ir/printer.h"
#include "op/accesses.h"
#include "op/op.h"
#include "passes/gpu/insert_barriers.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

// `body` (8 space indent) in a kernel of 128 threads over tensors X (float32, 64 x 64) and
// N (int32, 4).
ir::PrimFunc kernel(const std::string& body) {
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(X: T.Tensor((64, 64), \"float32\"), N: T.Tensor((4,), \"int32\")):\n"
      "    with T.Kernel(4, threads=128) as bx:\n" + body;
  return frontend::elaborate(load_function(source, "k.py", "main"));
}

const ir::StmtNode* first_tile_op(const ir::Stmt& body) {
  struct Finder : ir::IRVisitor {
    const ir::StmtNode* found = nullptr;
    void visit(const ir::Stmt& s) override {
      if (!found && s && op::is_tile_op(s.kind())) found = s.get();
      IRVisitor::visit(s);
    }
    using IRVisitor::visit;
  } finder;
  finder.visit(body);
  return finder.found;
}

struct Names {
  std::vector<std::string> reads, writes;
};

// The buffers of the regions of the first tile op in `body`, in the order its unit lists them.
Names regions_in(const std::string& body) {
  ir::PrimFunc f = kernel(body);
  const ir::StmtNode* op = first_tile_op(f.body);
  if (!op) throw std::logic_error("no tile op in the kernel");
  op::Regions r = op::regions_of(*op);
  Names names;
  for (const auto& region : r.reads) names.reads.push_back(region.buffer->name);
  for (const auto& region : r.writes) names.writes.push_back(region.buffer->name);
  return names;
}

using List = std::vector<std::string>;

constexpr const char* kSharedTiles =
    "        a = T.alloc_shared((64, 64), \"float32\")\n"
    "        b = T.alloc_shared((64, 64), \"float32\")\n"
    "        c = T.alloc_shared((64, 64), \"float32\")\n"
    "        x = T.alloc_shared((64,), \"float32\")\n"
    "        y = T.alloc_shared((64,), \"float32\")\n";

TEST(OpRegions, CopyReadsItsSourceAndWritesItsDestination) {
  Names n = regions_in(std::string(kSharedTiles) + "        T.copy(X, a)\n");
  EXPECT_EQ(n.reads, List{"X"});
  EXPECT_EQ(n.writes, List{"a"});
}

TEST(OpRegions, GemmReadsItsAccumulatorUnlessItClearsIt) {
  Names acc = regions_in(std::string(kSharedTiles) + "        T.gemm(a, b, c)\n");
  EXPECT_EQ(acc.reads, (List{"a", "b", "c"}));
  EXPECT_EQ(acc.writes, List{"c"});
  Names clear = regions_in(std::string(kSharedTiles) + "        T.gemm(a, b, c, clear_accum=True)\n");
  EXPECT_EQ(clear.reads, (List{"a", "b"}));
  EXPECT_EQ(clear.writes, List{"c"});
}

TEST(OpRegions, GemvReadsItsOutputOnlyWhenItAccumulates) {
  Names plain = regions_in(std::string(kSharedTiles) + "        T.gemv(a, x, y)\n");
  EXPECT_EQ(plain.reads, (List{"a", "x"}));
  EXPECT_EQ(plain.writes, List{"y"});
  Names acc = regions_in(std::string(kSharedTiles) + "        T.gemv(a, x, y, accumulate=True)\n");
  EXPECT_EQ(acc.reads, (List{"a", "x", "y"}));
  EXPECT_EQ(acc.writes, List{"y"});
}

TEST(OpRegions, FillOnlyWrites) {
  for (const char* call : {"        T.fill(a, 1.0)\n", "        T.clear(a)\n"}) {
    Names n = regions_in(std::string(kSharedTiles) + call);
    EXPECT_EQ(n.reads, List{}) << call;
    EXPECT_EQ(n.writes, List{"a"}) << call;
  }
}

TEST(OpRegions, ReduceReadsItsOutputOnlyWithoutClear) {
  Names clear = regions_in(std::string(kSharedTiles) + "        T.reduce_max(a, x, dim=1)\n");
  EXPECT_EQ(clear.reads, List{"a"});
  EXPECT_EQ(clear.writes, List{"x"});
  Names combined = regions_in(std::string(kSharedTiles) + "        T.reduce_sum(a, x, dim=1, clear=False)\n");
  EXPECT_EQ(combined.reads, (List{"a", "x"}));
  EXPECT_EQ(combined.writes, List{"x"});
}

TEST(OpRegions, CumSumReadsItsSourceAndWritesItsDestination) {
  Names n = regions_in(std::string(kSharedTiles) + "        T.cumsum(a, b, dim=0, reverse=True)\n");
  EXPECT_EQ(n.reads, List{"a"});
  EXPECT_EQ(n.writes, List{"b"});
  Names in_place = regions_in(std::string(kSharedTiles) + "        T.cumsum(x)\n");
  EXPECT_EQ(in_place.reads, List{"x"});
  EXPECT_EQ(in_place.writes, List{"x"});
}

TEST(OpRegions, AtomicAddReadsAndWritesItsDestination) {
  Names tile = regions_in(std::string(kSharedTiles) + "        T.atomic_add(X, a)\n");
  EXPECT_EQ(tile.reads, (List{"a", "X"}));
  EXPECT_EQ(tile.writes, List{"X"});
  Names scalar = regions_in(std::string(kSharedTiles) + "        T.atomic_add(X[0, 1], 2.0)\n");
  EXPECT_EQ(scalar.reads, List{"X"});
  EXPECT_EQ(scalar.writes, List{"X"});
}

// The names of a set of buffers, sorted.
List sorted(const op::BufferSet& set) {
  List names;
  for (const auto* b : set) names.push_back(b->name);
  std::sort(names.begin(), names.end());
  return names;
}

TEST(OpAccesses, AStatementReadsTheBuffersItsOpsIndexWith) {
  // The copy's region starts at n[0]: n is read, though no region of the op is n.
  ir::PrimFunc f = kernel("        n = T.alloc_local((1,), \"int32\")\n"
                          "        s = T.alloc_shared((64,), \"float32\")\n"
                          "        n[0] = N[bx]\n"
                          "        T.copy(X[n[0], 0:64], s)\n");
  op::Accesses all;
  all.visit(f.body);
  EXPECT_EQ(sorted(all.reads), (List{"N", "X", "n"}));
  EXPECT_EQ(sorted(all.writes), (List{"n", "s"}));
  op::Accesses shared(ir::MemoryScope::Shared);
  shared.visit(f.body);
  EXPECT_EQ(sorted(shared.reads), List{});
  EXPECT_EQ(sorted(shared.writes), List{"s"});
}

// A kernel body holding one op of each tile op kind, every operand a shared buffer of its own:
// a kind added to TILEC_FOR_EACH_TILE_OP without a sample here does not compile.
template <typename Op>
struct Sample;
template <>
struct Sample<ir::Copy> {
  static constexpr const char* body = "        T.copy(a, b)\n";
};
template <>
struct Sample<ir::Gemm> {
  static constexpr const char* body = "        T.gemm(a, b, c)\n";
};
template <>
struct Sample<ir::Gemv> {
  static constexpr const char* body = "        T.gemv(a, x, y)\n";
};
template <>
struct Sample<ir::Fill> {
  static constexpr const char* body = "        T.fill(a, 2.0)\n";
};
template <>
struct Sample<ir::Reduce> {
  static constexpr const char* body = "        T.reduce_sum(a, x, dim=0, clear=False)\n";
};
template <>
struct Sample<ir::CumSum> {
  static constexpr const char* body = "        T.cumsum(a, b, dim=1)\n";
};
template <>
struct Sample<ir::AtomicAdd> {
  static constexpr const char* body = "        T.atomic_add(a, b)\n";
};

struct KindSample {
  const char* kind;
  const char* body;
};
#define TILEC_SAMPLE(n) KindSample{#n, Sample<ir::n>::body},
constexpr KindSample kSamples[] = {TILEC_FOR_EACH_TILE_OP(TILEC_SAMPLE)};
#undef TILEC_SAMPLE

// `f`'s tile op with `before` just before it and `after` just after (either may be null).
ir::PrimFunc around_op(ir::PrimFunc f, const ir::Stmt& before, const ir::Stmt& after) {
  struct Wrap : ir::IRMutator {
    ir::Stmt before, after;
    ir::Stmt mutate(const ir::Stmt& s) override {
      if (s && op::is_tile_op(s.kind())) return ir::make_seq({before, s, after});
      return IRMutator::mutate(s);
    }
    using IRMutator::mutate;
  } wrap;
  wrap.before = before;
  wrap.after = after;
  f.body = wrap.mutate(f.body);
  return f;
}

// Whether insert_barriers puts a barrier into `f`.
bool barriered(ir::PrimFunc f) {
  passes::PassContext ctx;
  ctx.target = parse_target("cuda", "");
  ctx.func = &f;
  std::string ir = ir::to_string(passes::insert_barriers(f.body, ctx));
  return ir.find("T.device.sync_threads()") != std::string::npos;
}

std::vector<ir::Expr> origin(const ir::BufferNode& b) {
  return std::vector<ir::Expr>(b.shape.size(), ir::make_int(0));
}

TEST(OpRegions, EveryOpsBarriersFollowItsRegions) {
  for (const KindSample& sample : kSamples) {
    ir::PrimFunc f = kernel(std::string(kSharedTiles) + sample.body);
    const ir::StmtNode* op = first_tile_op(f.body);
    ASSERT_NE(op, nullptr) << sample.kind;
    ASSERT_STREQ(ir::kind_name(op->kind), sample.kind);
    op::Regions regions = op::regions_of(*op);
    auto in = [](const std::vector<ir::BufferRegion>& list, const ir::BufferNode* b) {
      return std::any_of(list.begin(), list.end(), [&](const ir::BufferRegion& r) { return r.buffer.get() == b; });
    };
    std::vector<ir::BufferRegion> touched = regions.reads;
    touched.insert(touched.end(), regions.writes.begin(), regions.writes.end());
    for (const ir::BufferRegion& r : touched) {
      const ir::Buffer& b = r.buffer;
      ir::Stmt write = ir::make_store(b, origin(*b), ir::make_float(0, b->dtype));
      ir::Stmt read = ir::make_evaluate(ir::make_load(b, origin(*b)));
      const bool reads = in(regions.reads, b.get()), writes = in(regions.writes, b.get());
      std::string what = std::string(sample.kind) + " on '" + b->name + "'";
      EXPECT_EQ(barriered(around_op(f, write, ir::Stmt())), reads || writes) << what << ": a store, then the op";
      EXPECT_EQ(barriered(around_op(f, read, ir::Stmt())), writes) << what << ": a load, then the op";
      EXPECT_EQ(barriered(around_op(f, ir::Stmt(), read)), writes) << what << ": the op, then a load";
    }
  }
}

}  // namespace
}  // namespace tilec

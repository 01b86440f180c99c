#include "runtime/tile_layouts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "ir/simplify.h"
#include "test_support.h"

namespace tilec::runtime {
namespace {

int64_t constant(const ir::Expr& e) {
  int64_t v = -1;
  EXPECT_TRUE(ir::is_const_int(ir::simplify(e), &v)) << "not constant";
  return v;
}

// Checks `t` against the fragment's own index expressions: every (thread, slot) inside the
// shape names an element that t says that thread holds, the lowest such thread and its slot
// are t's, and the holders are counted.
void expect_describes(const TileLayout& t, const ir::Fragment& f) {
  std::vector<std::set<int64_t>> holders(t.thread.size());
  std::vector<std::pair<int64_t, int64_t>> first(t.thread.size(), {-1, -1});
  for (int64_t tid = 0; tid < f.threads(); ++tid)
    for (int64_t slot = 0; slot < f.slots(); ++slot) {
      int64_t element = 0;
      bool inside = true;
      std::vector<ir::Expr> indices = f.indices(ir::make_int(tid), ir::make_int(slot));
      for (size_t d = 0; d < indices.size(); ++d) {
        int64_t i = constant(indices[d]);
        inside = inside && i < f.shape()[d];
        element = element * f.shape()[d] + i;
      }
      if (!inside) continue;
      holders[element].insert(tid);
      if (first[element].first == -1) first[element] = {tid, slot};
    }
  ASSERT_EQ(t.threads, f.threads());
  ASSERT_EQ(t.slots, f.slots());
  for (size_t e = 0; e < t.thread.size(); ++e) {
    EXPECT_EQ(t.thread[e], first[e].first) << "element " << e;
    EXPECT_EQ(t.slot[e], first[e].second) << "element " << e;
    EXPECT_EQ(t.holders[e], static_cast<int64_t>(holders[e].size())) << "element " << e;
  }
}

TEST(TileLayouts, FragmentsAreDescribedAsTheirIndexExpressionsPlaceElements) {
  const ir::Fragment fragments[] = {
      ir::mma_accumulator(32, 16, 2, 1), ir::wgmma_accumulator(64, 32, 1, 1), ir::mfma_accumulator(32, 32, 1, 1),
      ir::default_fragment({5, 33}, 128, 1),  // covers more than its shape
      ir::replicated_fragment({3, 4}),
      ir::mma_accumulator(16, 8, 1, 1).project({0}),  // a row reduction's: replicas across lanes
  };
  for (const ir::Fragment& f : fragments) {
    SCOPED_TRACE(f.to_string());
    expect_describes(fragment_layout("f", DType::Float32, f), f);
  }
}

TEST(TileLayouts, TheMmaAccumulatorPutsRowsOnLaneGroupsAndColumnPairsOnLanes) {
  // row = g + 8 h, col = c + 2 t; lane = 4 g + t, slot = c + 2 h (ir/layout.h).
  TileLayout t = standard_layout("mma_accumulator", {16, 8}, DType::Float32, {1, 1});
  EXPECT_EQ(t.scope, "fragment");
  EXPECT_EQ(t.threads, 32);
  EXPECT_EQ(t.slots, 4);
  for (int64_t row = 0; row < 16; ++row)
    for (int64_t col = 0; col < 8; ++col) {
      EXPECT_EQ(t.thread[row * 8 + col], 4 * (row % 8) + col / 2);
      EXPECT_EQ(t.slot[row * 8 + col], col % 2 + 2 * (row / 8));
      EXPECT_EQ(t.holders[row * 8 + col], 1);
    }
}

TEST(TileLayouts, SharedTilesGiveEachElementItsOwnOffset) {
  TileLayout swizzled = standard_layout("mma_swizzle", {16, 64}, DType::Float16);
  EXPECT_EQ(swizzled.scope, "shared");
  EXPECT_EQ(swizzled.description, "swizzled");
  std::vector<int64_t> sorted = swizzled.offset;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) ASSERT_EQ(sorted[i], static_cast<int64_t>(i));
  // Row 1's first 16-byte chunk lands in chunk 1 of its line: offsets 72.. (chunk 0 ^ 1).
  EXPECT_EQ(swizzled.offset[64], 72);
  EXPECT_NE(standard_layout("panels", {16, 64}, DType::Float16, {64}).offset, swizzled.offset);
  TileLayout row_major = standard_layout("row_major", {3, 5}, DType::Float32);
  EXPECT_EQ(row_major.offset, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}));
}

TEST(TileLayouts, StandardLayoutsNameWhatIsWrong) {
  auto error = [](const std::string& kind, const std::vector<int64_t>& shape, const std::vector<int64_t>& args) {
    try {
      standard_layout(kind, shape, DType::Float32, args);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("mma", {16, 8}, {}),
            "unknown layout 'mma': expected mma_accumulator, wgmma_accumulator, mfma_accumulator, "
            "default_fragment, row_major, mma_swizzle or panels");
  EXPECT_EQ(error("mma_accumulator", {16, 8}, {1}),
            "layout 'mma_accumulator' takes 2 dims of shape and 2 arguments (the warps along m and along n)");
  EXPECT_EQ(error("row_major", {4, 0}, {}), "layout 'row_major': every dim of its shape must be at least 1");
  EXPECT_EQ(error("default_fragment", {4, 6}, {32, 4}), "layout 'default_fragment': the vector must divide the last dim");
  EXPECT_EQ(error("row_major", {4096, 4096}, {}), "the layout of 'row_major' has more than 4194304 elements to describe");
}

TEST(TileLayouts, AKernelListsItsTilesAsLayoutInferenceLeftThem) {
  const char* source = R"(
import tilec.language as T

@T.prim_func
def gemm(A: T.Tensor((64, 32), "float16"), B: T.Tensor((32, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_shared = T.alloc_shared((64, 32), "float16")
        B_shared = T.alloc_shared((32, 64), "float16")
        C_local = T.alloc_fragment((64, 64), "float32")
        T.copy(A, A_shared)
        T.copy(B, B_shared)
        T.clear(C_local)
        T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C)
)";
  test_support::TemporaryCacheDir cache("tilec_tile_layouts_test_");
  Kernel cpu = compile(load_function(source, "gemm.py", "gemm"));
  EXPECT_TRUE(cpu.layouts().empty());  // the CPU backend lays out no tiles
  Kernel cuda = compile(load_function(source, "gemm.py", "gemm"), {.target = "cuda", .arch = "sm_80"});
  std::vector<std::string> names;
  for (const TileLayout& t : cuda.layouts()) names.push_back(t.name + " " + t.scope);
  EXPECT_EQ(names, (std::vector<std::string>{"A_shared shared", "B_shared shared", "C_local fragment"}));
  const TileLayout& c = cuda.layouts()[2];
  EXPECT_EQ(c.shape, (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(c.dtype, DType::Float32);
  EXPECT_EQ(c.threads, 128);
  EXPECT_EQ(c.threads * c.slots, 64 * 64);  // the accumulator holds each element once
  EXPECT_TRUE(std::all_of(c.holders.begin(), c.holders.end(), [](int64_t h) { return h == 1; }));
  EXPECT_EQ(cuda.layouts()[0].description, "swizzled");
}

TEST(TileLayouts, ThePipelinesBarriersAreNoTiles) {
  const char* source = R"(
import tilec.language as T

@T.prim_func
def gemm(A: T.Tensor((64, 256), "float16"), B: T.Tensor((256, 64), "float16"), C: T.Tensor((64, 64), "float32"),
         D: T.Tensor((8,), "uint64")):
    with T.Kernel(1, threads=128) as bx:
        A_shared = T.alloc_shared((64, 32), "float16")
        B_shared = T.alloc_shared((32, 64), "float16")
        C_local = T.alloc_fragment((64, 64), "float32")
        Words = T.alloc_shared((8,), "uint64")
        T.clear(C_local)
        for k in T.Pipelined(8, num_stages=2):
            T.copy(A[0, k * 32], A_shared)
            T.copy(B[k * 32, 0], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C)
        for i in T.Parallel(8):
            Words[i] = i
        T.copy(Words, D)
)";
  test_support::TemporaryCacheDir cache("tilec_tile_layouts_test_");
  Kernel cuda = compile(load_function(source, "gemm.py", "gemm"), {.target = "cuda", .arch = "sm_90a"});
  ASSERT_NE(cuda.source().find("mbarrier"), std::string::npos) << "no pipeline of mbarriers to leave out";
  std::vector<std::string> names;
  for (const TileLayout& t : cuda.layouts()) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"A_shared", "B_shared", "C_local", "Words"}));
}

}  // namespace
}  // namespace tilec::runtime

// ir::SharedLayout: each constructor's offsets against the device helper it stands for, the
// round trip (every offset of the tile hit once) for every tile width, bank conflicts of
// row-major tiles that the swizzles remove, user layouts refused when not a bijection, and
// layouts given as coordinates (from_coordinates), checked group by group on whole tensors.
#include "ir/shared_layout.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include "../../device/cuda/panels.h"

namespace tilec::ir {
namespace {

int64_t offset_at(const SharedLayout& layout, std::vector<int64_t> index) {
  std::vector<Expr> indices;
  for (int64_t i : index) indices.push_back(make_int(i));
  int64_t value = -1;
  EXPECT_TRUE(is_const_int(layout.offset_of(indices), &value));
  return value;
}

// swizzled_offset<Cols, ElemBytes> of device/cuda/gemm.h (a CUDA header), written out.
int64_t mma_swizzled_offset(int64_t cols, int64_t elem_bytes, int64_t row, int64_t col) {
  const int64_t row_bytes = cols * elem_bytes, byte = row * row_bytes + col * elem_bytes, chunk = byte >> 4;
  const int64_t key = row_bytes % 128 == 0 ? row : chunk >> 3;
  return (((chunk ^ (key & 7)) << 4) | (byte & 15)) / elem_bytes;
}

template <int Rows, int Cols, int Elem, int Panel>
void expect_panels_match_device() {
  SCOPED_TRACE(std::to_string(Rows) + " x " + std::to_string(Cols) + " of " + std::to_string(Elem) + " bytes, " +
               std::to_string(Panel) + "-byte panels");
  SharedLayoutRef layout = SharedLayout::panels({2, Rows, Cols}, Elem, Panel);
  EXPECT_EQ(layout->bijection_error(), "");
  EXPECT_EQ(layout->panel_bytes(), Panel);
  EXPECT_EQ(layout->swizzled(), Panel > 16);
  EXPECT_EQ(layout->device_offset(), "panel_offset<" + std::to_string(Rows) + ", " + std::to_string(Cols) + ", " +
                                         std::to_string(Elem) + ", " + std::to_string(Panel) + ">");
  for (int tile = 0; tile < 2; ++tile)
    for (int r = 0; r < Rows; ++r)
      for (int c = 0; c < Cols; ++c)
        ASSERT_EQ(offset_at(*layout, {tile, r, c}),
                  (tile * Rows * Cols + tilec_cuda::panel_offset<Rows, Cols, Elem, Panel>(r, c)))
            << tile << ", " << r << ", " << c;
}

TEST(SharedLayoutTest, PanelsAreWhatPanelOffsetComputesAndRoundTrip) {
  expect_panels_match_device<64, 64, 2, 128>();
  expect_panels_match_device<64, 32, 2, 64>();
  expect_panels_match_device<64, 16, 2, 32>();
  expect_panels_match_device<64, 8, 2, 16>();
  expect_panels_match_device<32, 128, 2, 128>();  // two panels a row
  expect_panels_match_device<32, 32, 4, 128>();
  expect_panels_match_device<16, 48, 2, 32>();    // three 32-byte panels
  expect_panels_match_device<8, 128, 1, 128>();
  expect_panels_match_device<8, 8, 4, 32>();
  expect_panels_match_device<1, 64, 4, 16>();  // one row of LSE values: unswizzled, end to end
}

TEST(SharedLayoutTest, OneRowIn16BytePanelsIsTheRowItself) {
  EXPECT_TRUE(SharedLayout::panels({3, 1, 64}, 4, 16)->same_offsets(*SharedLayout::row_major({3, 1, 64})));
  EXPECT_THROW(SharedLayout::panels({1, 64}, 4, 32), std::invalid_argument);  // a swizzle needs its 8 rows
  EXPECT_THROW(SharedLayout::panels({2, 64}, 4, 16), std::invalid_argument);
}

TEST(SharedLayoutTest, MmaSwizzleIsWhatSwizzledOffsetComputesAndRoundTrips) {
  struct Tile {
    int64_t rows, cols, elem;
  };
  for (Tile t : {Tile{32, 32, 4}, Tile{64, 64, 2}, Tile{16, 128, 2}, Tile{64, 32, 2}, Tile{32, 16, 2},
                 Tile{16, 8, 4}, Tile{128, 64, 1}, Tile{8, 16, 8}}) {
    SCOPED_TRACE(std::to_string(t.rows) + " x " + std::to_string(t.cols) + " of " + std::to_string(t.elem));
    SharedLayoutRef layout = SharedLayout::mma_swizzle({3, t.rows, t.cols}, t.elem);
    EXPECT_EQ(layout->bijection_error(), "");
    EXPECT_TRUE(layout->swizzled());
    EXPECT_EQ(layout->panel_bytes(), 0);
    EXPECT_EQ(layout->device_offset(),
              "swizzled_offset<" + std::to_string(t.cols) + ", " + std::to_string(t.elem) + ">");
    for (int64_t tile = 0; tile < 3; ++tile)
      for (int64_t r = 0; r < t.rows; ++r)
        for (int64_t c = 0; c < t.cols; ++c)
          ASSERT_EQ(offset_at(*layout, {tile, r, c}), tile * t.rows * t.cols + mma_swizzled_offset(t.cols, t.elem, r, c))
              << tile << ", " << r << ", " << c;
  }
}

TEST(SharedLayoutTest, RowMajorIsCompactAndRoundTrips) {
  SharedLayoutRef layout = SharedLayout::row_major({3, 5, 7});
  EXPECT_EQ(layout->bijection_error(), "");
  EXPECT_FALSE(layout->swizzled());
  EXPECT_EQ(layout->device_offset(), "");
  EXPECT_EQ(offset_at(*layout, {2, 4, 6}), 2 * 35 + 4 * 7 + 6);
  EXPECT_EQ(offset_at(*layout, {1, 0, 3}), 38);
  EXPECT_EQ(SharedLayout::row_major({9})->bijection_error(), "");
}

TEST(SharedLayoutTest, A128ByteRowSwizzleIsTheSameAs128BytePanels) {
  // Rows of one 128-byte line: the mma swizzle XORs the chunk with the row, as 128-byte panels do.
  EXPECT_TRUE(SharedLayout::mma_swizzle({64, 64}, 2)->same_offsets(*SharedLayout::panels({64, 64}, 2, 128)));
  // Rows of two lines: the mma swizzle keeps rows whole, panels split them.
  EXPECT_FALSE(SharedLayout::mma_swizzle({64, 128}, 2)->same_offsets(*SharedLayout::panels({64, 128}, 2, 128)));
  EXPECT_FALSE(SharedLayout::row_major({64, 64})->same_offsets(*SharedLayout::panels({64, 64}, 2, 128)));
}

TEST(SharedLayoutTest, ConstructorsRefuseTilesTheyDoNotFit) {
  EXPECT_THROW(SharedLayout::panels({64, 64}, 2, 96), std::invalid_argument);
  EXPECT_THROW(SharedLayout::panels({12, 64}, 2, 128), std::invalid_argument);   // rows not in groups of 8
  EXPECT_THROW(SharedLayout::panels({64, 24}, 2, 32), std::invalid_argument);    // 48-byte rows
  EXPECT_THROW(SharedLayout::mma_swizzle({3, 4}, 4), std::invalid_argument);     // 48 bytes: not whole lines
  EXPECT_THROW(SharedLayout::mma_swizzle({64}, 4), std::invalid_argument);
  EXPECT_THROW(SharedLayout::row_major({4, 0}), std::invalid_argument);
}

// Thread t of `threads` reads 16 bytes at (t, col) (a column of rows: what ldmatrix's 8 row
// addresses and a column-wise copy do) or at (row, 16 bytes * t) (along a row).
std::vector<std::vector<int64_t>> column_reads(int64_t threads, int64_t col) {
  std::vector<std::vector<int64_t>> first;
  for (int64_t t = 0; t < threads; ++t) first.push_back({t, col});
  return first;
}
std::vector<std::vector<int64_t>> row_reads(int64_t threads, int64_t row, int64_t elem_bytes) {
  std::vector<std::vector<int64_t>> first;
  for (int64_t t = 0; t < threads; ++t) first.push_back({row, t * 16 / elem_bytes});
  return first;
}

TEST(SharedLayoutTest, RowMajorTilesConflictDownAColumnAndTheSwizzlesDoNot) {
  // 64 x 64 fp16: 128-byte rows, so rows 0..7 at column 0 all start in bank 0: 8 wavefronts.
  EXPECT_EQ(SharedLayout::row_major({64, 64})->bank_conflicts(column_reads(8, 0), 16, 2), 7);
  EXPECT_EQ(SharedLayout::row_major({64, 64})->bank_conflicts(column_reads(32, 8), 16, 2), 4 * 7);
  EXPECT_EQ(SharedLayout::mma_swizzle({64, 64}, 2)->bank_conflicts(column_reads(8, 0), 16, 2), 0);
  EXPECT_EQ(SharedLayout::mma_swizzle({64, 64}, 2)->bank_conflicts(column_reads(32, 8), 16, 2), 0);
  EXPECT_EQ(SharedLayout::panels({64, 64}, 2, 128)->bank_conflicts(column_reads(32, 24), 16, 2), 0);
  // 64-byte rows: two rows a line, 4 wavefronts row-major; 64-byte panels spread them.
  EXPECT_EQ(SharedLayout::row_major({64, 32})->bank_conflicts(column_reads(8, 0), 16, 2), 3);
  EXPECT_EQ(SharedLayout::panels({64, 32}, 2, 64)->bank_conflicts(column_reads(32, 8), 16, 2), 0);
  EXPECT_EQ(SharedLayout::mma_swizzle({64, 32}, 2)->bank_conflicts(column_reads(32, 8), 16, 2), 0);
  // 32-byte rows: 32-byte panels; and 256-byte fp32 rows under the mma swizzle.
  EXPECT_EQ(SharedLayout::row_major({64, 16})->bank_conflicts(column_reads(8, 0), 16, 2), 1);
  EXPECT_EQ(SharedLayout::panels({64, 16}, 2, 32)->bank_conflicts(column_reads(8, 0), 16, 2), 0);
  EXPECT_EQ(SharedLayout::row_major({32, 64})->bank_conflicts(column_reads(8, 4), 16, 4), 7);
  EXPECT_EQ(SharedLayout::mma_swizzle({32, 64}, 4)->bank_conflicts(column_reads(8, 4), 16, 4), 0);
  // 4-byte reads down a column of a 32 x 32 fp32 tile: 32 threads in one bank.
  EXPECT_EQ(SharedLayout::row_major({32, 32})->bank_conflicts(column_reads(32, 0), 4, 4), 31);
}

TEST(SharedLayoutTest, ReadsAlongARowAreConflictFreeInEveryLayout) {
  for (const SharedLayoutRef& layout : {SharedLayout::row_major({64, 64}), SharedLayout::mma_swizzle({64, 64}, 2),
                                        SharedLayout::panels({64, 64}, 2, 128)})
    for (int64_t row : {0, 5})
      EXPECT_EQ(layout->bank_conflicts(row_reads(8, row, 2), 16, 2), 0) << layout->to_string() << " row " << row;
}

TEST(SharedLayoutTest, AUserLayoutIsItsExpression) {
  Expr i = make_var("i"), j = make_var("j");
  // Rows of 8 with the columns XORed by the row: a bijection.
  SharedLayoutRef xor_rows =
      SharedLayout::user({8, 8}, {i, j}, make_Add(make_Mul(i, make_int(8)), make_BitXor(j, i)));
  EXPECT_EQ(xor_rows->bijection_error(), "");
  EXPECT_EQ(offset_at(*xor_rows, {3, 5}), 3 * 8 + (5 ^ 3));
  EXPECT_EQ(xor_rows->kind(), SharedLayout::Kind::User);
  EXPECT_EQ(xor_rows->to_string(), "layout (i, j) -> i * 8 + (j ^ i)");
  EXPECT_EQ(xor_rows->bank_conflicts(column_reads(8, 0), 4, 4), 0);
  // Column-major is a bijection too, and conflicts down a column no more than row-major along one.
  SharedLayoutRef column_major = SharedLayout::user({16, 4}, {i, j}, make_Add(make_Mul(j, make_int(16)), i));
  EXPECT_EQ(column_major->bijection_error(), "");
  EXPECT_EQ(offset_at(*column_major, {3, 2}), 35);
}

TEST(SharedLayoutTest, AUserLayoutThatIsNotABijectionIsRefused) {
  Expr i = make_var("i"), j = make_var("j");
  EXPECT_EQ(SharedLayout::user({4, 4}, {i, j}, make_Add(i, j))->bijection_error(),
            "(0, 1) and (1, 0) both have offset 1: a layout gives each element its own place");
  EXPECT_EQ(SharedLayout::user({4, 4}, {i, j}, make_Add(make_Mul(i, make_int(5)), j))->bijection_error(),
            "the offset of (3, 1) is 16, outside the tile's 16 elements [0, 16)");
  EXPECT_EQ(SharedLayout::user({4}, {i}, make_Sub(i, make_int(1)))->bijection_error(),
            "the offset of (0,) is -1, outside the tile's 4 elements [0, 4)");
  Expr n = make_var("n");
  EXPECT_EQ(SharedLayout::user({4}, {i}, make_Add(i, n))->bijection_error(),
            "the offset of (0,) is n, not a constant: a layout is a function of its indices alone");
  EXPECT_THROW(SharedLayout::user({4, 4}, {i}, i), std::invalid_argument);
}

// TileLang's make_dq_layout of a (B, H, L, D) tensor: [b, h, l // 8, d // 8, d % 2, 4 * (l % 8) + (d % 8) // 2].
SharedLayoutRef dq_layout(std::vector<int64_t> shape) {
  Expr b = make_var("b"), h = make_var("h"), l = make_var("l"), d = make_var("d");
  std::vector<Expr> coordinates = {
      b, h, make_FloorDiv(l, make_int(8)), make_FloorDiv(d, make_int(8)), make_FloorMod(d, make_int(2)),
      make_Add(make_Mul(make_int(4), make_FloorMod(l, make_int(8))), make_FloorDiv(make_FloorMod(d, make_int(8)), make_int(2)))};
  return SharedLayout::from_coordinates(std::move(shape), {b, h, l, d}, coordinates);
}

TEST(SharedLayoutTest, CoordinatesAreReadRowMajorOverTheExtentsTheyTake) {
  Expr i = make_var("i"), j = make_var("j");
  // A transpose: (4, 8) -> (8, 4).
  SharedLayoutRef transposed = SharedLayout::from_coordinates({4, 8}, {i, j}, {j, i});
  EXPECT_EQ(transposed->bijection_error(), "");
  EXPECT_EQ(offset_at(*transposed, {3, 5}), 5 * 4 + 3);
  // Bit operators and selects fold as the simplifier writes them: (i >> 2, i & 3) is i itself.
  SharedLayoutRef bits = SharedLayout::from_coordinates(
      {16}, {i}, {make_ShiftRight(i, make_int(2)), make_select(make_LT(i, make_int(16)), make_BitAnd(i, make_int(3)), i)});
  for (int64_t k : {0, 5, 15}) EXPECT_EQ(offset_at(*bits, {k}), k);
  // More coordinates than dims.
  SharedLayoutRef dq = dq_layout({2, 3, 16, 16});
  const std::vector<int64_t> extents = {2, 3, 2, 2, 2, 32};
  for (std::vector<int64_t> index : {std::vector<int64_t>{1, 2, 13, 11}, {0, 1, 7, 4}}) {
    const int64_t b = index[0], h = index[1], l = index[2], d = index[3];
    const std::vector<int64_t> c = {b, h, l / 8, d / 8, d % 2, 4 * (l % 8) + (d % 8) / 2};
    int64_t expected = 0;
    for (size_t k = 0; k < c.size(); ++k) expected = expected * extents[k] + c[k];
    EXPECT_EQ(offset_at(*dq, index), expected);
  }
}

TEST(SharedLayoutTest, AWholeTensorsLayoutIsCheckedGroupByGroupInMilliseconds) {
  // The shapes of TileLang's flash-attention and attention-sink backward examples: 16M and 32M
  // elements, whose largest groups (l, d) are 64K and 512K.
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{8, 32, 1024, 64}, {1, 64, 4096, 128}}) {
    const auto start = std::chrono::steady_clock::now();
    SharedLayoutRef dq = dq_layout(shape);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(dq->bijection_error(), "");
    EXPECT_EQ(dq->elements(), shape[0] * shape[1] * shape[2] * shape[3]);
    EXPECT_LT(seconds, 1.0);  // about 3 and 40 ms here; enumerating every element took seconds
  }
}

TEST(SharedLayoutTest, CoordinatesThatAreNotABijectionAreRefused) {
  Expr i = make_var("i"), j = make_var("j");
  auto error = [&](std::vector<int64_t> shape, std::vector<Expr> vars, std::vector<Expr> coordinates) {
    try {
      SharedLayout::from_coordinates(std::move(shape), std::move(vars), std::move(coordinates));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error({4, 4}, {i, j}, {make_FloorDiv(i, make_int(2)), j}),
            "(0, 0) and (1, 0) have the same coordinates: a layout gives each element its own place");
  EXPECT_EQ(error({4, 4}, {i, j}, {make_Mul(i, make_int(2)), j}),
            "coordinate 0 (i * 2) takes more places than the 4 elements of their indices fill: some place is left "
            "empty, so some other is shared");
  EXPECT_EQ(error({4, 4}, {i, j}, {i}),
            "no coordinate uses index j (dim 1 of 4): elements that differ there alone would share a place");
  EXPECT_EQ(error({4}, {i}, {make_Sub(i, make_int(1))}), "coordinate 0 (i - 1) of (0,) is -1: coordinates count from 0");
  Expr n = make_var("n");
  EXPECT_EQ(error({4}, {i}, {make_Add(i, n)}),
            "coordinate 0 (i + n) of (0,) is not a constant: a layout is a function of its indices alone");
  // One group of 2^24 elements (all four indices in one coordinate) is more than is enumerated.
  Expr a = make_var("a"), b = make_var("b");
  EXPECT_EQ(error({256, 256, 16, 16}, {a, b, i, j},
                  {make_Add(make_Mul(make_Add(make_Mul(make_Add(make_Mul(a, make_int(256)), b), make_int(16)), i),
                                     make_int(16)),
                            j)}),
            "its coordinates tie indices a, b, i, j together, 16777216 elements, more than the 4194304 a bijection "
            "check enumerates; write coordinates that each use fewer of them");
  // Indices that are coordinates themselves are not enumerated: a (2^30, 4) transpose is checked at once.
  Expr l = make_var("l", DType::Int64), h = make_var("h", DType::Int64);
  EXPECT_EQ(error({int64_t{1} << 30, 4}, {l, h}, {h, l}), "");
  // A single offset over as many elements is not enumerated either.
  EXPECT_EQ(SharedLayout::user({4096, 4096}, {i, j}, make_Add(make_Mul(i, make_int(4096)), j))->bijection_error(),
            "its 16777216 elements are more than the 4194304 a bijection check of one offset enumerates; give the "
            "layout as coordinates (lambda i, j: [i // 8, j, i % 8]), which are checked group by group");
}

}  // namespace
}  // namespace tilec::ir

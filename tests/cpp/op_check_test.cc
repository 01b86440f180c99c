// The units' argument checks (op/<op>.h) on IR built without the frontend: what each op
// requires of its operands, whoever makes the op.
#include <gtest/gtest.h>

#include <string>

#include "op/atomic_add.h"
#include "op/copy.h"
#include "op/cumsum.h"
#include "op/gemm.h"
#include "op/gemv.h"
#include "op/reduce.h"

namespace tilec {
namespace {

ir::BufferRegion whole(const std::string& name, std::vector<int64_t> shape, DType dtype = DType::Float32,
                       ir::MemoryScope scope = ir::MemoryScope::Shared) {
  std::vector<ir::Expr> dims;
  ir::BufferRegion r;
  for (int64_t d : shape) {
    dims.push_back(ir::make_int(d));
    r.region.push_back({ir::make_int(0), ir::make_int(d)});
  }
  r.buffer = ir::make_buffer(name, dtype, dims, {}, scope);
  return r;
}

// The message `check` fails with, or "" when it passes.
template <typename Check>
std::string failure(Check check) {
  try {
    check();
  } catch (const CompileError& e) {
    return e.what();
  }
  return "";
}

TEST(OpCheck, CopyNeedsOneTileShape) {
  ir::Copy copy;
  copy.src = whole("a", {64, 32});
  copy.dst = whole("b", {1, 64, 32});
  EXPECT_EQ(failure([&] { op::check(copy, {}); }), "");
  copy.dst = whole("b", {32, 64});
  EXPECT_NE(failure([&] { op::check(copy, {}); })
                .find("T.copy: shapes differ: source 'a' is (64, 32) but destination 'b' is (32, 64)"),
            std::string::npos);
}

TEST(OpCheck, CumSumNeedsOnChipTilesOfOneShapeAndDtype) {
  ir::CumSum scan;
  scan.src = whole("s", {64, 32});
  scan.dst = whole("d", {1, 64, 32}, DType::Float32, ir::MemoryScope::Fragment);
  EXPECT_EQ(failure([&] { op::check(scan, {}, {}); }), "");
  scan.dst = whole("d", {32, 64});
  EXPECT_NE(failure([&] { op::check(scan, {}, {}); })
                .find("T.cumsum: shapes differ: destination 'd' is (32, 64) but source 's' is (64, 32)"),
            std::string::npos);
  scan.dst = whole("d", {64, 32}, DType::Float16);
  EXPECT_NE(failure([&] { op::check(scan, {}, {}); })
                .find("T.cumsum: 'dst' (d) is float16 but 'src' (s) is float32; both must have one dtype"),
            std::string::npos);
  scan.dst = whole("g", {64, 32}, DType::Float32, ir::MemoryScope::Global);
  EXPECT_NE(failure([&] { op::check(scan, {}, {}); })
                .find("T.cumsum: 'dst' (g) is a global buffer; T.cumsum scans shared or fragment buffers"),
            std::string::npos);
  scan.src = scan.dst = whole("b", {64, 32}, DType::Bool);
  EXPECT_NE(failure([&] { op::check(scan, {}, {}); }).find("T.cumsum: bool buffers cannot be summed"),
            std::string::npos);
}

TEST(OpCheck, GemmNeedsAgreeingDimsAndAnAccumulatorThatAdds) {
  ir::Gemm gemm;
  gemm.a = whole("A", {64, 32});
  gemm.b = whole("B", {32, 16});
  gemm.c = whole("C", {64, 16});
  EXPECT_EQ(failure([&] { op::check(gemm, {}, {}, {}); }), "");
  gemm.transpose_b = true;
  EXPECT_NE(failure([&] { op::check(gemm, {}, {}, {}); }).find("T.gemm: the K dims of A and B differ (32 vs 16)"),
            std::string::npos);
  gemm.transpose_b = false;
  gemm.c = whole("C", {64, 16}, DType::Float16);
  EXPECT_EQ(failure([&] { op::check(gemm, {}, {}, {}); }), "");
  gemm.c = whole("C", {64, 16}, DType::Int8);
  EXPECT_NE(failure([&] { op::check(gemm, {}, {}, {}); }).find("must be a float or int32 buffer, not int8"),
            std::string::npos);
  gemm.c = whole("C", {2, 64, 16});
  EXPECT_NE(failure([&] { op::check(gemm, {}, {}, {}); }).find("'C' (C) must be a 2-D tile"), std::string::npos);
}

TEST(OpCheck, GemvNeedsLengthsThatMatchTheMatrix) {
  ir::Gemv gemv;
  gemv.a = whole("A", {64, 32});
  gemv.x = whole("x", {32});
  gemv.y = whole("y", {64});
  EXPECT_EQ(failure([&] { op::check(gemv, {}, {}, {}); }), "");
  gemv.y = whole("y", {32});
  EXPECT_NE(failure([&] { op::check(gemv, {}, {}, {}); }).find("T.gemv: y's length differs from A's rows (64 vs 32)"),
            std::string::npos);
}

TEST(OpCheck, ReduceDimsCountFromTheEndAndTheOutputDropsTheReducedOne) {
  ir::Reduce reduce;
  reduce.reduce_kind = ir::ReduceKind::Max;
  reduce.src = whole("s", {64, 32});
  reduce.dst = whole("d", {64});
  EXPECT_EQ(op::normalized_dim(reduce, -1, {}), 1);
  EXPECT_NE(failure([&] { op::normalized_dim(reduce, 2, {}); })
                .find("T.reduce_max: dim 2 is out of range for the 2-D buffer 's'"),
            std::string::npos);
  reduce.dim = 1;
  EXPECT_EQ(failure([&] { op::check(reduce, {}); }), "");
  reduce.dim = 0;
  EXPECT_NE(failure([&] { op::check(reduce, {}); }).find("'out' (d) is (64,) but reducing 's' over dim 0 gives (32,)"),
            std::string::npos);
}

TEST(OpCheck, AtomicAddNeedsATileOfDstsShapeAndANumber) {
  ir::AtomicAdd add;
  add.dst = whole("d", {8, 8});
  add.src = whole("s", {8, 8});
  EXPECT_EQ(failure([&] { op::check(add, {}); }), "");
  add.src = whole("s", {8, 4});
  EXPECT_NE(failure([&] { op::check(add, {}); }).find("T.atomic_add: shapes differ"), std::string::npos);
  add.src = ir::BufferRegion();
  add.dst = whole("d", {1}, DType::Bool);
  EXPECT_NE(failure([&] { op::check(add, {}); }).find("bool buffers cannot be added to"), std::string::npos);
}

}  // namespace
}  // namespace tilec

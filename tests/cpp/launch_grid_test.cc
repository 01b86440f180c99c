// launch_grid evaluates the CUDA code generator's grid extents with a launch's int words.
#include "runtime/cuda/launch_grid.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "ir/ir.h"

namespace tilec::runtime {
namespace {

using codegen::IntSlot;
using codegen::KernelAbi;

// Slots: n (an int64 symbolic dim), m (an int32 scalar, param 1).
struct Fixture {
  ir::Expr n = ir::make_var("n", DType::Int64);
  ir::Expr m = ir::make_var("m");
  KernelAbi abi;

  Fixture() {
    abi.int_slots = {{IntSlot::Source::SymbolicDim, 0, 0, n}, {IntSlot::Source::Scalar, 1, 0, m}};
  }

  // ceildiv(x, d) as the frontend writes it: (x + d - 1) // d.
  static ir::Expr ceildiv(ir::Expr x, int64_t d) {
    const DType t = x->dtype;
    return ir::make_FloorDiv(ir::make_Add(std::move(x), ir::make_int(d - 1, t)), ir::make_int(d, t));
  }
};

bool same(const LaunchDims& a, const LaunchDims& b) {
  return a.x == b.x && a.y == b.y && a.z == b.z;
}

TEST(LaunchGrid, EvaluatesExtentsOverSymbolsAndScalars) {
  Fixture f;
  auto grid =
      launch_grid({Fixture::ceildiv(f.n, 64), f.m, ir::make_int(3)}, f.abi, {1000, 5}, "k");
  ASSERT_TRUE(grid.has_value());
  EXPECT_TRUE(same(*grid, {16, 5, 3})) << grid->x << " " << grid->y << " " << grid->z;
}

TEST(LaunchGrid, MissingAxesAreOne) {
  Fixture f;
  auto grid = launch_grid({f.n}, f.abi, {7, 0}, "k");
  ASSERT_TRUE(grid.has_value());
  EXPECT_TRUE(same(*grid, {7, 1, 1}));
}

TEST(LaunchGrid, AnEmptyExtentLaunchesNothing) {
  Fixture f;
  EXPECT_FALSE(launch_grid({Fixture::ceildiv(f.n, 64), f.m}, f.abi, {0, 4}, "k").has_value());
  EXPECT_FALSE(launch_grid({f.n, f.m}, f.abi, {4, -2}, "k").has_value());
}

TEST(LaunchGrid, ExtentsBeyondCudaLimitsAreArgumentErrors) {
  Fixture f;
  EXPECT_TRUE(launch_grid({f.n, f.m}, f.abi, {kMaxGridX, kMaxGridYZ}, "k").has_value());
  try {
    launch_grid({ir::make_int(1), f.m}, f.abi, {1, kMaxGridYZ + 1}, "rows");
    FAIL() << "expected an ArgumentError";
  } catch (const ArgumentError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("kernel 'rows': grid extent y (m) is 65536 blocks"), std::string::npos)
        << message;
    EXPECT_NE(message.find("limit of 65535"), std::string::npos) << message;
  }
  EXPECT_THROW(launch_grid({f.n}, f.abi, {kMaxGridX + 1, 0}, "k"), ArgumentError);
}

TEST(LaunchGrid, AnExtentOverAnUnboundVarIsAnInternalError) {
  Fixture f;
  EXPECT_THROW(launch_grid({ir::make_var("unbound")}, f.abi, {1, 1}, "k"), std::logic_error);
  EXPECT_THROW(launch_grid({}, f.abi, {1, 1}, "k"), std::logic_error);
}

}  // namespace
}  // namespace tilec::runtime

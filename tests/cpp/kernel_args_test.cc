// A call's arguments checked against the kernel's params (runtime/kernel_args.h), through the
// public API on CPU kernels: each refusal is an ArgumentError naming the parameter, and an
// argument of the wrong kind an ArgumentTypeError.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "test_support.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

// Writes each scalar, as a float64, to `out`.
constexpr const char* kScalars = R"(
import tilec.language as T

@T.prim_func
def scalars(out: T.Tensor((8,), "float64"), i8: T.int8, u8: T.uint8, i32: T.int32, i64: T.int64,
            u64: T.uint64, flag: T.bool, f16: T.float16, f32: T.float32):
    with T.Kernel(1, threads=32) as bx:
        out[0] = T.cast(i8, "float64")
        out[1] = T.cast(u8, "float64")
        out[2] = T.cast(i32, "float64")
        out[3] = T.cast(i64, "float64")
        out[4] = T.cast(u64, "float64")
        out[5] = T.if_then_else(flag, 1.0, 0.0)
        out[6] = T.cast(f16, "float64")
        out[7] = T.cast(f32, "float64")
)";

class KernelArgsTest : public testing::Test {
 protected:
  void SetUp() override { kernel_.emplace(compile(load_function(kScalars, "scalars.py", "scalars"))); }

  TensorView out_view() {
    TensorView view;
    view.data = out_.data();
    view.dtype = DType::Float64;
    view.shape = {8};
    view.strides = {1};
    return view;
  }

  // The arguments of a call that runs: every scalar at the edge of its range.
  std::vector<ArgValue> valid_args() {
    return {out_view(), int64_t{-128}, int64_t{255}, int64_t{2147483647}, int64_t{-9223372036854775807 - 1},
            std::numeric_limits<uint64_t>::max(), true, 65504.0, std::numeric_limits<double>::infinity()};
  }

  // The message of the ArgumentError that a call with `args[index] = value` raises; `type_error`:
  // whether it must be an ArgumentTypeError.
  std::string refusal(size_t index, const ArgValue& value, bool type_error) {
    std::vector<ArgValue> args = valid_args();
    args[index] = value;
    out_.assign(8, -1.0);
    try {
      kernel_->launch(args);
    } catch (const ArgumentTypeError& e) {
      EXPECT_TRUE(type_error) << e.what();
      return check_untouched(e.what());
    } catch (const ArgumentError& e) {
      EXPECT_FALSE(type_error) << e.what();
      return check_untouched(e.what());
    }
    ADD_FAILURE() << "argument " << index << ": expected an ArgumentError";
    return "";
  }

  std::string check_untouched(const std::string& message) {
    for (double v : out_) EXPECT_EQ(v, -1.0) << "a refused call ran: " << message;
    return message;
  }

  test_support::TemporaryCacheDir cache_{"tilec_kernel_args_test_"};
  std::optional<Kernel> kernel_;
  std::vector<double> out_ = std::vector<double>(8, -1.0);
};

TEST_F(KernelArgsTest, ScalarsAtTheEdgesOfTheirRangesArrive) {
  kernel_->launch(valid_args());
  EXPECT_EQ(out_, (std::vector<double>{-128, 255, 2147483647, -9223372036854775808.0, 18446744073709551615.0, 1,
                                       65504, std::numeric_limits<double>::infinity()}));
}

TEST_F(KernelArgsTest, IntegersPastTheirDtypesRangeAreRefused) {
  EXPECT_EQ(refusal(1, int64_t{128}, false), "argument 'i8' is 128, outside int8's range [-128, 127]");
  EXPECT_EQ(refusal(2, int64_t{-1}, false), "argument 'u8' is -1, outside uint8's range [0, 255]");
  EXPECT_EQ(refusal(3, int64_t{1} << 40, false),
            "argument 'i32' is 1099511627776, outside int32's range [-2147483648, 2147483647]");
  EXPECT_EQ(refusal(4, uint64_t{1} << 63, false),
            "argument 'i64' is 9223372036854775808, outside int64's range [-9223372036854775808, "
            "9223372036854775807]");
  EXPECT_EQ(refusal(5, int64_t{-1}, false),
            "argument 'u64' is -1, outside uint64's range [0, 18446744073709551615]");
  EXPECT_EQ(refusal(6, int64_t{2}, false), "argument 'flag' is 2, outside bool's range [0, 1]");
}

TEST_F(KernelArgsTest, BoolsAreIntegersAndIntegersBoolsOfZeroOrOne) {
  std::vector<ArgValue> args = valid_args();
  args[1] = true;
  args[6] = int64_t{1};
  kernel_->launch(args);
  EXPECT_EQ(out_[0], 1);
  EXPECT_EQ(out_[5], 1);
}

TEST_F(KernelArgsTest, AFloatForAnIntegerOrBoolParamIsATypeError) {
  EXPECT_EQ(refusal(3, 2.0, true), "argument 'i32' must be an integer (int32), not a float");
  EXPECT_EQ(refusal(6, 0.0, true), "argument 'flag' must be a bool, not a float");
}

TEST_F(KernelArgsTest, FloatsPastTheirDtypesFiniteRangeAreRefused) {
  EXPECT_EQ(refusal(7, 65505.0, false), "argument 'f16' is 65505, outside float16's finite range [-65504, 65504]");
  EXPECT_EQ(refusal(7, int64_t{-70000}, false),
            "argument 'f16' is -70000, outside float16's finite range [-65504, 65504]");
  EXPECT_EQ(refusal(8, 1e300, false),
            "argument 'f32' is 1e+300, outside float32's finite range [-3.40282e+38, 3.40282e+38]");
}

TEST_F(KernelArgsTest, IntegersInfAndNanGoToFloatParams) {
  std::vector<ArgValue> args = valid_args();
  args[7] = -std::numeric_limits<double>::infinity();
  args[8] = std::numeric_limits<uint64_t>::max();
  kernel_->launch(args);
  EXPECT_EQ(out_[6], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(out_[7], static_cast<double>(static_cast<float>(18446744073709551615.0)));
  args[7] = std::numeric_limits<double>::quiet_NaN();
  kernel_->launch(args);
  EXPECT_TRUE(std::isnan(out_[6]));
}

TEST_F(KernelArgsTest, TensorsAndScalarsInEachOthersPlaceAreTypeErrors) {
  EXPECT_EQ(refusal(0, int64_t{3}, true), "argument 'out' must be a tensor, not an int");
  EXPECT_EQ(refusal(3, out_view(), true), "argument 'i32' must be a scalar (int32), not a tensor");
}

TEST_F(KernelArgsTest, AViewPastTheMemoryItsCallerOwnsIsRefused) {
  TensorView view = out_view();
  view.memory = ByteRange{0, 63};
  EXPECT_EQ(refusal(0, view, false),
            "argument 'out' (float64 of shape (8,) and strides (1,)) covers bytes [0, 64) of its data, past the "
            "[0, 63) its memory holds");
  view.memory = ByteRange{0, 64};
  kernel_->launch({view, int64_t{0}, int64_t{0}, int64_t{0}, int64_t{0}, uint64_t{0}, false, 0.0, 0.0});
  EXPECT_EQ(out_[0], 0.0);
}

TEST_F(KernelArgsTest, AViewReachingPastInt64IsRefused) {
  TensorView view = out_view();
  view.strides = {int64_t{1} << 61};
  EXPECT_EQ(refusal(0, view, false),
            "argument 'out' (float64 of shape (8,) and strides (2305843009213693952,)) reaches past 2^63 bytes "
            "from its data");
}

TEST_F(KernelArgsTest, DataOffItsElementAlignmentIsRefused) {
  TensorView view = out_view();
  view.data = reinterpret_cast<char*>(out_.data()) + 4;
  EXPECT_EQ(refusal(0, view, false),
            "argument 'out' has its data at an address that is not a multiple of its float64 elements' 8 bytes: "
            "pass an aligned copy");
}

TEST_F(KernelArgsTest, ANegativeDimIsRefused) {
  TensorView view = out_view();
  view.shape = {-8};
  EXPECT_EQ(refusal(0, view, false), "argument 'out' has shape (-8,): dim 0 is negative");
}

TensorView view_of(std::vector<int64_t> shape, std::vector<int64_t> strides) {
  TensorView view;
  view.shape = std::move(shape);
  view.strides = std::move(strides);
  return view;
}

TEST(TensorViewReach, CoversTheBytesFromTheLowestToTheHighestElement) {
  auto reach = [](const TensorView& v, int64_t bytes) {
    std::optional<ByteRange> r = v.reach(bytes);
    return r ? std::vector<int64_t>{r->begin, r->end} : std::vector<int64_t>{};
  };
  EXPECT_EQ(reach(view_of({8, 4}, {4, 1}), 4), (std::vector<int64_t>{0, 128}));
  EXPECT_EQ(reach(view_of({8, 4}, {16, 1}), 2), (std::vector<int64_t>{0, 232}));  // every 4th row
  EXPECT_EQ(reach(view_of({8, 4}, {-4, 1}), 4), (std::vector<int64_t>{-112, 16}));  // rows reversed
  EXPECT_EQ(reach(view_of({8, 4}, {0, 0}), 4), (std::vector<int64_t>{0, 4}));      // broadcast
  EXPECT_EQ(reach(view_of({0, 8}, {0, 0}), 4), (std::vector<int64_t>{0, 0}));      // empty
  EXPECT_EQ(reach(view_of({int64_t{1} << 40, 1 << 20}, {1 << 20, 1}), 8), std::vector<int64_t>{});
}

TensorView float32_view(std::vector<float>& data, bool read_only) {
  TensorView view;
  view.data = data.data();
  view.dtype = DType::Float32;
  view.shape = {static_cast<int64_t>(data.size())};
  view.strides = {1};
  view.read_only = read_only;
  return view;
}

TEST(KernelArgsOutputShapes, AnOutputDimThatComesOutNegativeIsRefused) {
  const char* source = R"(
import tilec.language as T

@T.prim_func
def shrink(src: T.Tensor((T.symbolic("n"),), "float32"), dst: T.Tensor((T.symbolic("n") - 4,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.serial(T.symbolic("n") - 4):
            dst[i] = src[i + 4]
)";
  test_support::TemporaryCacheDir cache("tilec_kernel_args_test_");
  Kernel kernel = compile(load_function(source, "shrink.py", "shrink"));
  std::vector<float> src(6);
  EXPECT_EQ(kernel.output_shapes({float32_view(src, false), std::nullopt}), (std::vector<std::vector<int64_t>>{{2}}));
  src.resize(3);
  try {
    kernel.output_shapes({float32_view(src, false), std::nullopt});
    FAIL() << "expected an ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot size output 'dst': its dim 0 (n - 4) is -1 for these arguments");
  }
}

TEST(KernelArgsOutputShapes, ShapesAloneSizeTheOutputsAsTensorsDo) {
  const char* source = R"(
import tilec.language as T

@T.prim_func
def pairs(a: T.Tensor((T.symbolic("m"), T.symbolic("n")), "float32"), scale: T.float32,
          out: T.Tensor((T.symbolic("n"), T.symbolic("m") * 2), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.serial(T.symbolic("m")):
            for j in T.serial(T.symbolic("n")):
                out[j, 2 * i] = a[i, j] * scale
                out[j, 2 * i + 1] = a[i, j]
)";
  test_support::TemporaryCacheDir cache("tilec_kernel_args_test_");
  Kernel kernel = compile(load_function(source, "pairs.py", "pairs"));
  using Shapes = std::vector<std::optional<std::vector<int64_t>>>;
  EXPECT_EQ(kernel.output_shapes(Shapes{std::vector<int64_t>{3, 5}, std::nullopt, std::nullopt}),
            (std::vector<std::vector<int64_t>>{{5, 6}}));
  std::vector<float> data(15);
  TensorView a = float32_view(data, false);
  a.shape = {3, 5};
  a.strides = {5, 1};
  EXPECT_EQ(kernel.output_shapes({a, std::nullopt, std::nullopt}), (std::vector<std::vector<int64_t>>{{5, 6}}));
  try {
    kernel.output_shapes(Shapes{std::vector<int64_t>{15}, std::nullopt, std::nullopt});
    FAIL() << "expected an ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_EQ(std::string(e.what()), "argument 'a' has 1 dims (15,) but kernel 'pairs' expects 2");
  }
  try {
    kernel.output_shapes(Shapes{std::vector<int64_t>{3, -1}, std::nullopt, std::nullopt});
    FAIL() << "expected an ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_EQ(std::string(e.what()), "argument 'a' has shape (3, -1): dim 1 is negative");
  }
}

// Reads `src`; writes `stored` (a store), `copied` (T.copy), `added` (T.atomic_add).
constexpr const char* kWrites = R"(
import tilec.language as T

@T.prim_func
def writes(src: T.Tensor((4,), "float32"), stored: T.Tensor((4,), "float32"),
           copied: T.Tensor((4,), "float32"), added: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        tile = T.alloc_shared((4,), "float32")
        T.copy(src, tile)
        T.copy(tile, copied)
        for i in T.Parallel(4):
            stored[i] = src[i] * 2
            T.atomic_add(added[i], src[i])
)";


TEST(KernelArgsWrites, TheTensorsAKernelWritesAreItsOutputs) {
  test_support::TemporaryCacheDir cache("tilec_kernel_args_test_");
  Kernel kernel = compile(load_function(kWrites, "writes.py", "writes"));
  std::vector<bool> written;
  for (const ParamInfo& p : kernel.params()) written.push_back(p.written);
  EXPECT_EQ(written, (std::vector<bool>{false, true, true, true}));
}

TEST(KernelArgsWrites, AReadOnlyTensorIsReadButNotWritten) {
  test_support::TemporaryCacheDir cache("tilec_kernel_args_test_");
  Kernel kernel = compile(load_function(kWrites, "writes.py", "writes"));
  std::vector<float> src = {1, 2, 3, 4}, stored(4, -1), copied(4, -1), added(4, 0);
  for (int output = 1; output <= 3; ++output) {
    std::vector<ArgValue> args = {float32_view(src, true), float32_view(stored, false),
                                  float32_view(copied, false), float32_view(added, false)};
    std::get<TensorView>(args[output]).read_only = true;
    try {
      kernel.launch(args);
      ADD_FAILURE() << "expected output " << output << " to be refused";
    } catch (const ArgumentError& e) {
      EXPECT_EQ(std::string(e.what()), "argument '" + kernel.params()[output].name +
                                           "' is read-only, but kernel 'writes' writes it: pass a writable array");
    }
  }
  EXPECT_EQ(stored, std::vector<float>(4, -1)) << "a refused call ran";
  kernel.launch({float32_view(src, true), float32_view(stored, false), float32_view(copied, false),
                 float32_view(added, false)});
  EXPECT_EQ(stored, (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(copied, src);
  EXPECT_EQ(added, src);
}

}  // namespace
}  // namespace tilec

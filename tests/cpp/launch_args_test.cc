// pack_launch_args fills the kernel ABI's words from a call's arguments; cuda_param_words
// lays them out as the one parameter of a CUDA kernel.
#include "runtime/launch_args.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "ir/ir.h"

namespace tilec::runtime {
namespace {

using codegen::IntSlot;
using codegen::KernelAbi;

TensorView tensor_at(uintptr_t address, std::vector<int64_t> shape, std::vector<int64_t> strides) {
  TensorView view;
  view.data = reinterpret_cast<void*>(address);
  view.dtype = DType::Float32;
  view.shape = std::move(shape);
  view.strides = std::move(strides);
  view.device = DeviceType::CUDA;
  return view;
}

uint64_t bits_of(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

// Params: (A tensor, alpha float, B tensor, k int, flag bool, beta float); n a symbolic dim
// (A's dim 0), A's row stride a Var.
struct Fixture {
  ir::Expr n = ir::make_var("n");
  ir::Expr stride = ir::make_var("A_stride0");
  ir::Expr k = ir::make_var("k");
  ir::Expr flag = ir::make_var("flag", DType::Bool);
  KernelAbi abi;
  std::vector<ArgValue> args;

  Fixture() {
    abi.tensor_params = {0, 2};
    abi.int_slots = {{IntSlot::Source::SymbolicDim, 0, 0, n},
                     {IntSlot::Source::Stride, 0, 0, stride},
                     {IntSlot::Source::Scalar, 3, 0, k},
                     {IntSlot::Source::Scalar, 4, 0, flag}};
    abi.float_params = {1, 5};
    abi.symbols = {{n, 0, 0}};
    args = {tensor_at(0x1000, {7, 3}, {5, 1}), 2.5, tensor_at(0x2000, {7}, {1}), int64_t{-4},
            true, int64_t{3}};
  }
};

TEST(LaunchArgs, PacksEachWordInAbiOrder) {
  Fixture f;
  LaunchArgs packed = pack_launch_args(f.abi, f.args, "k");
  EXPECT_EQ(packed.tensors, (std::vector<void*>{reinterpret_cast<void*>(0x1000),
                                                reinterpret_cast<void*>(0x2000)}));
  EXPECT_EQ(packed.ints, (std::vector<int64_t>{7, 5, -4, 1}));
  // An int passed for a float param becomes a double.
  EXPECT_EQ(packed.floats, (std::vector<double>{2.5, 3.0}));
}

TEST(LaunchArgs, AUint64ScalarPassesItsBits) {
  Fixture f;
  f.args[3] = uint64_t{0xffff'ffff'ffff'fffe};
  f.args[5] = uint64_t{1} << 63;  // to a float param: its value
  LaunchArgs packed = pack_launch_args(f.abi, f.args, "k");
  EXPECT_EQ(packed.ints[2], -2);
  EXPECT_EQ(packed.floats[1], 9223372036854775808.0);
}

TEST(LaunchArgs, SymbolicDimsAreReadFromTheTensorDimTheirSlotNames) {
  // The slot names B's dim 0 (7 as well, as checked arguments agree), not the Var: a variant
  // lowered again has Vars of its own.
  Fixture f;
  f.abi.int_slots[0] = {IntSlot::Source::SymbolicDim, 2, 0, ir::make_var("n")};
  std::get<TensorView>(f.args[2]).shape = {9};
  EXPECT_EQ(pack_launch_args(f.abi, f.args, "k").ints[0], 9);
}

TEST(LaunchArgs, SymbolOfNoTensorDimIsAnArgumentErrorNamingIt) {
  Fixture f;
  f.abi.int_slots[0].param = f.abi.int_slots[0].dim = -1;
  try {
    pack_launch_args(f.abi, f.args, "scale");
    FAIL() << "expected an ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("kernel 'scale': symbolic dim 'n'"), std::string::npos)
        << e.what();
  }
}

TEST(LaunchArgs, CudaWordsAreTensorsThenIntsThenFloatBits) {
  Fixture f;
  std::vector<uint64_t> words =
      cuda_param_words(pack_launch_args(f.abi, f.args, "k"));
  EXPECT_EQ(words, (std::vector<uint64_t>{0x1000, 0x2000, 7, 5, static_cast<uint64_t>(-4), 1,
                                          bits_of(2.5), bits_of(3.0)}));
}

TEST(LaunchArgs, EmptyArraysOfTheCudaParameterAreOneZeroWord) {
  LaunchArgs args;
  args.ints = {9};
  EXPECT_EQ(cuda_param_words(args), (std::vector<uint64_t>{0, 9, 0}));
  EXPECT_EQ(cuda_param_words(LaunchArgs{}), (std::vector<uint64_t>{0, 0, 0}));
}

}  // namespace
}  // namespace tilec::runtime

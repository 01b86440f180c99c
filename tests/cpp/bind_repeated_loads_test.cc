// bind_repeated_loads on calls built by hand: the IR before and after. (A staged gather through
// the CUDA pass list: cuda_passes_test.cc.)
#include "passes/gpu/bind_repeated_loads.h"

#include <gtest/gtest.h>

#include <string>

#include "ir/device_calls.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "target/target.h"
#include "text_count.h"

namespace tilec {
namespace {

using namespace ir;  // NOLINT: IR built by hand
using test_support::count;

class BindRepeatedLoads : public ::testing::Test {
 protected:
  std::string after(const std::vector<Expr>& args) {
    Stmt call = make_evaluate(make_call(DType::Int32, std::string(kDeviceCallPrefix) + "f", args));
    passes::PassContext ctx;
    ctx.target = parse_target("cuda", "sm_90a");
    return to_string(passes::bind_repeated_loads(call, ctx));
  }

  Expr i = make_var("i"), c = make_var("c", DType::Bool);
  Buffer index = make_buffer("Index", DType::Int32, {make_int(64)}, {}, MemoryScope::Global);
  Buffer x = make_buffer("X", DType::Float32, {make_int(64)}, {}, MemoryScope::Global);
  Buffer r = make_buffer("r", DType::Int32, {make_int(4)}, {}, MemoryScope::Local);
  Expr load = make_load(index, {i});
};

TEST_F(BindRepeatedLoads, AValueReadTwiceIsReadOnceBeforeTheCall) {
  // before: T.device.f(Index[i] + 1, Index[i] * 2)
  EXPECT_EQ(after({make_Add(load, make_int(1)), make_Mul(load, make_int(2))}),
            "reused = Index[i]\nT.evaluate(T.device.f(reused + 1, reused * 2))\n");
}

TEST_F(BindRepeatedLoads, TheLargestRepeatedValueGoesFirstAndWhatItHoldsBeforeIt) {
  // max(sel, 0) twice, and sel (which holds the load) once more on its own
  Expr sel = make_select(make_LT(i, make_int(8)), load, make_int(-1));
  Expr clamped = make_Max(sel, make_int(0));
  EXPECT_EQ(after({make_Add(clamped, make_int(1)), make_GE(clamped, make_int(3)), make_GE(sel, make_int(0))}),
            "reused = T.if_then_else(i < 8, Index[i], -1)\nreused_1 = T.max(reused, 0)\n"
            "T.evaluate(T.device.f(reused_1 + 1, reused_1 >= 3, reused >= 0))\n");
}

TEST_F(BindRepeatedLoads, AValueReadOnlyOnSomePathsStays) {
  // under a select's branches and past && only: binding it would read where the call may not
  Expr args0 = make_select(c, load, make_int(0));
  Expr args1 = make_And(c, make_GT(load, make_int(0)));
  std::string ir = after({args0, args1});
  EXPECT_EQ(count(ir, "reused"), 0u) << ir;
  // read unconditionally once, it is bound for both
  ir = after({args0, make_Add(load, make_int(1))});
  EXPECT_EQ(ir, "reused = Index[i]\nT.evaluate(T.device.f(T.if_then_else(c, reused, 0), reused + 1))\n");
}

TEST_F(BindRepeatedLoads, AnAddressIsNotARead) {
  // &X[i] twice reads nothing; &X[Index[i]] and Index[i] read Index[i] twice
  Expr address = make_call(DType::Int64, kAddressOf, {make_load(x, {i})});
  EXPECT_EQ(count(after({address, address}), "reused"), 0u);
  Expr gathered = make_call(DType::Int64, kAddressOf, {make_load(x, {load})});
  EXPECT_EQ(after({gathered, make_GE(load, make_int(0))}),
            "reused = Index[i]\nT.evaluate(T.device.f(T.address_of(X[reused]), reused >= 0))\n");
}

TEST_F(BindRepeatedLoads, RegistersAreNotMemory) {
  Expr reg = make_load(r, {make_int(0)});
  EXPECT_EQ(count(after({make_Add(reg, make_int(1)), make_Mul(reg, make_int(2))}), "reused"), 0u);
}

}  // namespace
}  // namespace tilec

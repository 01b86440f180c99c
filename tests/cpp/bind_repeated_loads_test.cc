// bind_repeated_loads: calls built by hand (IR before and after), then a staged gather through
// the CUDA pass list.
#include "passes/gpu/bind_repeated_loads.h"

#include <gtest/gtest.h>

#include <string>

#include "ir/device_calls.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "target/target.h"
#include "text_count.h"
#include "tilec/tilec.h"

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

TEST(BindRepeatedLoadsCuda, AStagedGatherReadsEachRowsIndexOnceACopy) {
  // Each step gathers rows of X by index (zeros for -1): the index is in the cp.async's source
  // address, its zero-fill predicate and the row's bounds check.
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(X: T.Tensor((200, 64), \"bfloat16\"), Index: T.Tensor((128,), \"int32\"),\n"
      "         Y: T.Tensor((32, 64), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        tile = T.alloc_shared((32, 64), \"bfloat16\")\n"
      "        acc = T.alloc_fragment((32, 64), \"float32\")\n"
      "        T.clear(acc)\n"
      "        for k in T.Pipelined(4, num_stages=2):\n"
      "            for i, j in T.Parallel(32, 64):\n"
      "                tile[i, j] = T.if_then_else(Index[k * 32 + i] >= 0, X[T.max(Index[k * 32 + i], 0), j], 0)\n"
      "            for i, j in T.Parallel(32, 64):\n"
      "                acc[i, j] += tile[i, j]\n"
      "        T.copy(acc, Y)\n";
  std::string ir = emit(load_function(source, "k.py", "main"), {.target = "cuda", .arch = "sm_90a"}, EmitStage::IR);
  size_t copies = count(ir, "cp_async_16(");
  ASSERT_GE(copies, 2u) << ir;  // before the loop and in it
  size_t at = 0;
  while ((at = ir.find("cp_async_16(", at)) != std::string::npos) {
    std::string call = ir.substr(at, ir.find('\n', at) - at);
    EXPECT_EQ(count(call, "Index["), 0u) << call;
    ++at;
  }
  EXPECT_EQ(count(ir, "= Index["), copies) << ir;
}

}  // namespace
}  // namespace tilec

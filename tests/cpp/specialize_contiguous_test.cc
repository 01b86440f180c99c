// specialize_contiguous: tensor strides become the products of the later dims.
#include <gtest/gtest.h>

#include "frontend/elaborate.h"
#include "ir/printer.h"
#include "passes/specialize_contiguous.h"
#include "tilec/tilec.h"

namespace {

using namespace tilec;

ir::PrimFunc elaborated(const std::string& params) {
  std::string source = "import tilec.language as T\n\n@T.prim_func\ndef main(" + params +
                       "):\n    with T.Kernel(1) as bx:\n        A[0, 0, 0] = A[0, 0, 1]\n";
  return frontend::elaborate(load_function(source, "k.py", "main"));
}

std::vector<std::string> stride_texts(const ir::PrimFunc& f) {
  std::vector<std::string> texts;
  for (const auto& s : f.params[0].buffer->strides) texts.push_back(ir::to_string(s));
  return texts;
}

TEST(SpecializeContiguous, ConstantShapesGiveConstantStrides) {
  ir::PrimFunc f = passes::specialize_contiguous(elaborated("A: T.Tensor((2, 3, 4), \"float32\")"));
  EXPECT_EQ(stride_texts(f), (std::vector<std::string>{"T.int64(12)", "T.int64(4)", "T.int64(1)"}));
}

TEST(SpecializeContiguous, SymbolicShapesGiveProductsOfTheirDims) {
  ir::PrimFunc tile = elaborated("A: T.Tensor((T.symbolic(\"m\"), T.symbolic(\"n\"), 8), \"float32\")");
  ir::PrimFunc f = passes::specialize_contiguous(tile);
  std::vector<std::string> strides = stride_texts(f);
  ASSERT_EQ(strides.size(), 3u);
  EXPECT_NE(strides[0].find("n"), std::string::npos) << strides[0];
  EXPECT_NE(strides[0].find("8"), std::string::npos) << strides[0];
  EXPECT_EQ(strides[1], "T.int64(8)");
  EXPECT_EQ(strides[2], "T.int64(1)");
  // The shape is untouched (its symbols are what the runtime solves).
  EXPECT_TRUE(f.params[0].buffer->shape[0].same_as(tile.params[0].buffer->shape[0]));
}

TEST(SpecializeContiguous, TheGeneratedCodeIndexesWithTheStrides) {
  FunctionSource source = load_function(
      "import tilec.language as T\n\n@T.prim_func\ndef main(A: T.Tensor((2, 3, 4), \"float32\")):\n"
      "    with T.Kernel(1) as bx:\n        A[1, 2, 3] = A[0, 0, 1]\n",
      "k.py", "main");
  std::string specialized = emit(source, {}, EmitStage::Source);
  EXPECT_EQ(specialized.find("stride"), std::string::npos) << specialized;
  EXPECT_NE(specialized.find("A[12 + 8 + 3] = A[1];"), std::string::npos) << specialized;
  CompileOptions general;
  general.pass_configs["tilec.specialize_contiguous"] = "0";
  std::string strided = emit(source, general, EmitStage::Source);
  EXPECT_NE(strided.find("A_stride0"), std::string::npos) << strided;
}

}  // namespace

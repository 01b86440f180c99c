// Eager jit functions (frontend/elaborate.cc): T.const dims resolve from the declaration of
// the tensor that binds them wherever they are first used, and the kernel records which
// argument dims it was compiled for.
#include <gtest/gtest.h>

#include <string>

#include "base/diagnostics.h"
#include "frontend/elaborate.h"
#include "ir/printer.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

ir::PrimFunc elaborate_eager(const std::string& source, const std::map<std::string, Value>& args) {
  return frontend::elaborate(load_function(source, "k.py", "f", args));
}

bool has_const_dim(const ir::PrimFunc& f, int param, int dim, int64_t value) {
  for (const auto& cd : f.const_dims)
    if (cd.param == param && cd.dim == dim && cd.value == value) return true;
  return false;
}

std::string eager_error(const std::string& source, const std::map<std::string, Value>& args) {
  try {
    elaborate_eager(source, args);
  } catch (const CompileError& e) {
    return e.what();
  } catch (const ArgumentError& e) {
    return std::string("ArgumentError: ") + e.what();
  }
  return "";
}

// `H = M // 2` before `A: T.Tensor((M, N))` binds M and N (line 5).
const char* kHalve = R"(import tilec.language as T

def f(A, block=4):
    M, N = T.const("M, N")
    H = M // 2
    A: T.Tensor((M, N), "float32")
    B = T.empty((H, N), "float32")
    with T.Kernel(T.ceildiv(H, block), threads=1) as bx:
        for i, j in T.Parallel(block, N):
            B[bx * block + i, j] = A[bx * block + i, j]
    return B
)";

TEST(ElaborateEager, ConstDimUsedBeforeTheTensorThatBindsIt) {
  ir::PrimFunc f = elaborate_eager(kHalve, {{"A", Value::tensor_spec({8, 3}, DType::Float32)}});
  ASSERT_EQ(f.params.size(), 2u);
  EXPECT_EQ(ir::to_string(f.params[1].buffer->shape[0]), "4");
  EXPECT_EQ(ir::to_string(f.params[1].buffer->shape[1]), "3");
  // Both dims of A are ones the kernel was compiled for.
  EXPECT_EQ(f.const_dims.size(), 2u);
  EXPECT_TRUE(has_const_dim(f, 0, 0, 8));
  EXPECT_TRUE(has_const_dim(f, 0, 1, 3));
  EXPECT_NE(ir::to_string(f.body).find("with T.Kernel(1, threads=1) as bx:\n    for i in T.Parallel(4):"),
            std::string::npos) << ir::to_string(f.body);
}

TEST(ElaborateEager, ConstDimBoundThroughAnAlias) {
  // TileLang's convolution: K reaches the declaration only as KH and KW.
  const char* source = R"(import tilec.language as T

def f(data, kernel):
    N, H, K = T.const("N, H, K")
    KH, KW = K, K
    OH = H - K + 1
    data: T.Tensor((N, H), "float32")
    kernel: T.Tensor((KH, KW), "float32")
    out = T.empty((N, OH), "float32")
    with T.Kernel(N, threads=1) as bx:
        for i in T.serial(OH):
            out[bx, i] = data[bx, i] * kernel[0, 0]
    return out
)";
  ir::PrimFunc f = elaborate_eager(source, {{"data", Value::tensor_spec({2, 10}, DType::Float32)},
                                            {"kernel", Value::tensor_spec({3, 3}, DType::Float32)}});
  EXPECT_EQ(ir::to_string(f.params[2].buffer->shape[1]), "8");
  // data's two dims and the kernel's first, where K is bound (its second is checked against it).
  EXPECT_EQ(f.const_dims.size(), 3u);
  EXPECT_TRUE(has_const_dim(f, 0, 0, 2));
  EXPECT_TRUE(has_const_dim(f, 0, 1, 10));
  EXPECT_TRUE(has_const_dim(f, 1, 0, 3));
}

TEST(ElaborateEager, DimsAlreadyBoundAreUnchanged) {
  // Declared first: bound there, as before; a dim given by name is a constant.
  const char* source = R"(import tilec.language as T

def f(A):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), "float32")
    B = T.empty((M // 2, N), "float32")
    with T.Kernel(1, threads=1) as bx:
        B[0, 0] = A[0, 0]
    return B
)";
  ir::PrimFunc f = elaborate_eager(source, {{"A", Value::tensor_spec({8, 3}, DType::Float32)}});
  EXPECT_EQ(f.const_dims.size(), 2u);
  ir::PrimFunc given = elaborate_eager(kHalve, {{"A", Value::tensor_spec({8, 3}, DType::Float32)},
                                                {"M", Value::of_int(8)}});
  EXPECT_EQ(given.const_dims.size(), 1u);  // N only: M is part of the constants
  EXPECT_TRUE(has_const_dim(given, 0, 1, 3));
}

TEST(ElaborateEager, ConstDimNoDeclarationBindsIsALocatedError) {
  // Only a plain dim binds: (M // 2,) is checked against the argument, it gives no M.
  const char* source = R"(import tilec.language as T

def f(A):
    M = T.const("M")
    H = M // 2
    A: T.Tensor((M // 2,), "float32")
    with T.Kernel(1, threads=1) as bx:
        A[0] = 1.0
)";
  std::string error = eager_error(source, {{"A", Value::tensor_spec({4}, DType::Float32)}});
  EXPECT_EQ(error.rfind("k.py:5:9: error: T.const dim 'M' has no value here: no declaration of a "
                        "tensor argument ('A: T.Tensor((M, ...), dtype)') gives it", 0), 0u)
      << error;
  EXPECT_NE(error.find("\n        H = M // 2\n            ^"), std::string::npos) << error;
}

TEST(ElaborateEager, ConstDimInACompileTimeDecisionBeforeItsTensorIsALocatedError) {
  const char* source = R"(import tilec.language as T

def f(A):
    M = T.const("M")
    if M > 128:
        A0 = 1.0
    A: T.Tensor((M,), "float32")
    with T.Kernel(1, threads=1) as bx:
        A[0] = 1.0
)";
  std::string error = eager_error(source, {{"A", Value::tensor_spec({256}, DType::Float32)}});
  EXPECT_EQ(error.rfind("k.py:5:8: error: T.const dim 'M' has no value here", 0), 0u) << error;
  EXPECT_NE(error.find("only after a compile-time decision on it"), std::string::npos) << error;
}

TEST(ElaborateEager, ErrorsAfterTheDeclarationsAreReportedOnceWhereTheyAre) {
  const char* source = R"(import tilec.language as T

def f(A):
    M = T.const("M")
    H = M // 2
    A: T.Tensor((M,), "float32")
    with T.Kernel(1, threads=1) as bx:
        A[H] = undefined_name
)";
  std::string error = eager_error(source, {{"A", Value::tensor_spec({8}, DType::Float32)}});
  EXPECT_EQ(error.rfind("k.py:8:16: error: name 'undefined_name' is not defined", 0), 0u) << error;
}

TEST(ElaborateEager, TwoTensorsThatDisagreeOnALateBoundDimAreAnArgumentError) {
  const char* source = R"(import tilec.language as T

def f(A, B):
    M = T.const("M")
    H = M // 2
    A: T.Tensor((M,), "float32")
    B: T.Tensor((M,), "float32")
    with T.Kernel(1, threads=1) as bx:
        B[H] = A[H]
)";
  std::string error = eager_error(source, {{"A", Value::tensor_spec({8}, DType::Float32)},
                                           {"B", Value::tensor_spec({6}, DType::Float32)}});
  EXPECT_EQ(error, "ArgumentError: argument 'B' has shape (6,) but dim 0 must be 8 "
                   "(declared at k.py:7:5)");
}

}  // namespace
}  // namespace tilec

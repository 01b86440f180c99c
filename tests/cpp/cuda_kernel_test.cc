// A CUDA kernel through the public API: compiled for an explicit arch with no GPU, its
// arguments checked before anything touches a device, and, where there is a GPU, launched.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "codegen/cuda/codegen_cuda.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "test_support.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

// Y[i] = X[i] * factor for i < n, over a grid of ceildiv(n, block) x rows.
constexpr const char* kScale = R"(import tilec
import tilec.language as T

@tilec.jit
def scale(block, rows):
    n = T.symbolic("n")

    @T.prim_func
    def main(X: T.Tensor((rows, n), "float32"), Y: T.Tensor((rows, n), "float32"), factor: T.float32):
        with T.Kernel(T.ceildiv(n, block), rows, threads=block) as (bx, by):
            for i in T.Parallel(block):
                if bx * block + i < n:
                    Y[by, bx * block + i] = X[by, bx * block + i] * factor

    return main
)";

FunctionSource scale_source(int64_t rows) {
  return load_function(kScale, "scale.py", "scale",
                       {{"block", Value::of_int(128)}, {"rows", Value::of_int(rows)}});
}

// A view of a CUDA tensor that is never read: the checks under test stop before the launch.
TensorView cuda_view(int64_t rows, int64_t n, int device_id = 0, DType dtype = DType::Float32) {
  TensorView view;
  view.data = reinterpret_cast<void*>(uintptr_t{0x7f0000000000});
  view.dtype = dtype;
  view.shape = {rows, n};
  view.strides = {n, 1};
  view.device = DeviceType::CUDA;
  view.device_id = device_id;
  return view;
}

std::string argument_error(const Kernel& kernel, const std::vector<ArgValue>& args) {
  try {
    kernel.launch(args);
  } catch (const ArgumentError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an ArgumentError";
  return "";
}

class CudaKernelTest : public testing::Test {
 protected:
  void SetUp() override {
    if (runtime::NvrtcCompiler::get() == nullptr)
      GTEST_SKIP() << runtime::NvrtcCompiler::unavailable_reason();
  }

  test_support::TemporaryCacheDir cache_{"tilec_cuda_kernel_test_"};
};

TEST_F(CudaKernelTest, CompilesForAnExplicitArchWithoutAGpu) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    Kernel kernel = compile(scale_source(2), {.target = "cuda", .arch = arch});
    EXPECT_EQ(kernel.target(), "cuda");
    EXPECT_EQ(kernel.arch(), arch);
    EXPECT_NE(kernel.source().find("tilec_main(const tilec_args"), std::string::npos) << kernel.source();
  }
}

TEST(CudaKernelName, IsTheFunctionsNameSpelledAsACIdentifier) {
  EXPECT_EQ(codegen::cuda_kernel_name("main"), "tilec_main");
  EXPECT_EQ(codegen::cuda_kernel_name("flash_fwd2"), "tilec_flash_fwd2");
  // Python names may hold any letter; UTF-8 bytes become '_' (two for each of these).
  EXPECT_EQ(codegen::cuda_kernel_name("\xce\xbb_k"), "tilec____k");
}

TEST_F(CudaKernelTest, EmitsSourceWithoutArchAndPtxForAnArch) {
  const std::string source = emit(scale_source(2), {.target = "cuda"}, EmitStage::Source);
  EXPECT_NE(source.find("__global__"), std::string::npos) << source;
  const std::string ptx = emit(scale_source(2), {.target = "cuda", .arch = "sm_80"}, EmitStage::PTX);
  EXPECT_NE(ptx.find(".target sm_80"), std::string::npos) << ptx.substr(0, 400);
  EXPECT_EQ(ptx.rfind("// target: cuda sm_80 (warp 32, smem 163 KiB, ", 0), 0u) << ptx.substr(0, 400);
  EXPECT_NE(ptx.find(".entry tilec_main("), std::string::npos) << ptx.substr(0, 400);
  EXPECT_THROW(emit(scale_source(2), {.target = "cpu"}, EmitStage::PTX), std::invalid_argument);
}

TEST_F(CudaKernelTest, ArchIsForCudaOnly) {
  EXPECT_THROW(compile(scale_source(2), {.target = "cpu", .arch = "sm_80"}), std::invalid_argument);
  EXPECT_THROW(compile(scale_source(2), {.target = "hip"}), std::invalid_argument);
}

TEST_F(CudaKernelTest, WithoutAGpuTheArchMustBeGiven) {
  if (cuda_available()) GTEST_SKIP() << "there is a GPU here, whose arch is taken";
  try {
    compile(scale_source(2), {.target = "cuda"});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("pass one, e.g. arch \"sm_90a\""), std::string::npos)
        << e.what();
  }
}

TEST_F(CudaKernelTest, CpuTensorsAreRefusedNamingTheParameter) {
  Kernel kernel = compile(scale_source(2), {.target = "cuda", .arch = "sm_90a"});
  TensorView x = cuda_view(2, 100);
  x.device = DeviceType::CPU;
  EXPECT_EQ(argument_error(kernel, {x, cuda_view(2, 100), 2.0}),
            "argument 'X' is in CPU memory but kernel 'main' was compiled for CUDA: pass a "
            "tensor on the GPU");
}

TEST_F(CudaKernelTest, TensorsOnTwoDevicesAreRefused) {
  Kernel kernel = compile(scale_source(2), {.target = "cuda", .arch = "sm_90a"});
  EXPECT_EQ(argument_error(kernel, {cuda_view(2, 100, 0), cuda_view(2, 100, 1), 2.0}),
            "argument 'Y' is on CUDA device 1 but argument 'X' is on device 0: the tensors of "
            "kernel 'main' must all be on one device");
}

TEST_F(CudaKernelTest, AnEmptyGridLaunchesNothing) {
  // n = 0 gives ceildiv(0, 128) = 0 blocks: nothing reaches the driver, GPU or not.
  Kernel kernel = compile(scale_source(2), {.target = "cuda", .arch = "sm_90a"});
  EXPECT_NO_THROW(kernel.launch({cuda_view(2, 0), cuda_view(2, 0), 2.0}));
}

TEST_F(CudaKernelTest, AGridBeyondCudaLimitsIsAnArgumentError) {
  Kernel kernel = compile(scale_source(70000), {.target = "cuda", .arch = "sm_90a"});
  const std::string message =
      argument_error(kernel, {cuda_view(70000, 1), cuda_view(70000, 1), 2.0});
  EXPECT_NE(message.find("grid extent y (70000) is 70000 blocks"), std::string::npos) << message;
}

TEST_F(CudaKernelTest, APersistentGridPastWhatTheKernelCountsIsAnArgumentError) {
  // A warp-specialized gemm on sm_90a runs in persistent blocks, which count the grid's tiles
  // (here 2^31) in 32-bit integers.
  const char* source = R"(
import tilec.language as T

@T.prim_func
def huge_grid(A: T.Tensor((128, 64), "bfloat16"), B: T.Tensor((64, 256), "bfloat16"),
              C: T.Tensor((128, 256), "bfloat16")):
    with T.Kernel(65536, 32768, threads=256) as (bx, by):
        A_s = T.alloc_shared((128, 64), "bfloat16")
        B_s = T.alloc_shared((64, 256), "bfloat16")
        C_l = T.alloc_fragment((128, 256), "float32")
        T.clear(C_l)
        for k in T.Pipelined(1, num_stages=2):
            T.copy(A[0, k * 64], A_s)
            T.copy(B[k * 64, 0], B_s)
            T.gemm(A_s, B_s, C_l)
        T.copy(C_l, C)
)";
  Kernel kernel = compile(load_function(source, "huge.py", "huge_grid"), {.target = "cuda", .arch = "sm_90a"});
  const std::string message = argument_error(
      kernel, {cuda_view(128, 64, 0, DType::BFloat16), cuda_view(64, 256, 0, DType::BFloat16),
               cuda_view(128, 256, 0, DType::BFloat16)});
  EXPECT_NE(message.find("kernel 'huge_grid': its grid is 2147483648 tiles for these arguments, over the 2^31 - 1 "
                         "a persistent kernel counts"),
            std::string::npos)
      << message;
}

TEST_F(CudaKernelTest, AnEmptyTensorThatATmaMapWouldDescribeRunsTheGeneralVariant) {
  // The grid doesn't depend on m: with m = 0 the kernel runs, and reads A only out of bounds
  // (zeros). No TMA tensor map describes a tensor of no elements, and only the contiguous
  // variant copies with TMA.
  const char* source = R"(
import tilec.language as T

@T.prim_func
def gemm_m(A: T.Tensor((T.symbolic("m"), 128), "bfloat16"), B: T.Tensor((128, 256), "bfloat16"),
           C: T.Tensor((128, 256), "bfloat16")):
    with T.Kernel(1, 1, threads=256) as (bx, by):
        A_s = T.alloc_shared((128, 64), "bfloat16")
        B_s = T.alloc_shared((64, 256), "bfloat16")
        C_l = T.alloc_fragment((128, 256), "float32")
        T.clear(C_l)
        for k in T.Pipelined(2, num_stages=2):
            T.copy(A[0, k * 64], A_s)
            T.copy(B[k * 64, 0], B_s)
            T.gemm(A_s, B_s, C_l)
        T.copy(C_l, C)
)";
  if (cuda_available()) GTEST_SKIP() << "the views here point at no memory: this test stops at the missing driver";
  Kernel kernel = compile(load_function(source, "gemm_m.py", "gemm_m"), {.target = "cuda", .arch = "sm_90a"});
  ASSERT_NE(kernel.source().find("tma_load(args.tensor_maps[0]"), std::string::npos) << kernel.source();
  const std::vector<ArgValue> args = {cuda_view(0, 128, 0, DType::BFloat16), cuda_view(128, 256, 0, DType::BFloat16),
                                      cuda_view(128, 256, 0, DType::BFloat16)};
  const std::string log = test_support::captured_debug_log([&] {
    try {
      kernel.launch(args);
      ADD_FAILURE() << "expected the launch to find no driver";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot launch CUDA kernel 'gemm_m'"), std::string::npos) << e.what();
    }
  });
  EXPECT_NE(log.find("building the general"), std::string::npos) << log;
}

TEST_F(CudaKernelTest, RunsOnTheGpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: " << cuda_unavailable_reason();
  const runtime::CudaDriver& cuda = *runtime::CudaDriver::get();
  cuda.ensure_context();
  const int64_t rows = 3, n = 1000;
  std::vector<float> x(rows * n), y(rows * n, -1.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 97) - 48.0f;
  const size_t bytes = x.size() * sizeof(float);
  runtime::CUdeviceptr dx = 0, dy = 0;
  cuda.check(cuda.cuMemAlloc(&dx, bytes), "cuMemAlloc");
  cuda.check(cuda.cuMemAlloc(&dy, bytes), "cuMemAlloc");
  cuda.check(cuda.cuMemcpyHtoD(dx, x.data(), bytes), "cuMemcpyHtoD");
  cuda.check(cuda.cuMemcpyHtoD(dy, y.data(), bytes), "cuMemcpyHtoD");
  TensorView vx = cuda_view(rows, n), vy = cuda_view(rows, n);
  vx.data = reinterpret_cast<void*>(dx);
  vy.data = reinterpret_cast<void*>(dy);

  Kernel kernel = compile(scale_source(rows), {.target = "cuda"});
  kernel.launch({vx, vy, 2.5});
  cuda.check(cuda.cuStreamSynchronize(nullptr), "cuStreamSynchronize");
  cuda.check(cuda.cuMemcpyDtoH(y.data(), dy, bytes), "cuMemcpyDtoH");
  for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], x[i] * 2.5f) << "at " << i;
  cuda.check(cuda.cuMemFree(dx), "cuMemFree");
  cuda.check(cuda.cuMemFree(dy), "cuMemFree");
}

TEST(CpuKernel, RefusesGpuTensors) {
  test_support::TemporaryCacheDir cache("tilec_cuda_kernel_test_");
  Kernel kernel = compile(scale_source(2), {.target = "cpu"});
  const std::string message = argument_error(kernel, {cuda_view(2, 100), cuda_view(2, 100), 2.0});
  EXPECT_NE(message.find("argument 'X' is on a GPU"), std::string::npos) << message;
}

}  // namespace
}  // namespace tilec

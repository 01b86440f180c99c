// Compiles a tile-language matmul from source text with libtilec and runs it on the CPU,
// then on the GPU where one is usable; each result is checked against a float64 product.
// Exits 0 when every run that could run is right.
#include <tilec/tilec.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#ifdef TILEC_EXAMPLE_CUDA
#include <cuda_runtime.h>
#endif

namespace {

constexpr const char* kSource = R"(import tilec.language as T

def matmul(M, N, K, block_M=64, block_N=64, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), "float32")
            B_shared = T.alloc_shared((block_K, block_N), "float32")
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])
    return main
)";

constexpr int64_t M = 200, N = 136, K = 96;  // not multiples of the blocks: edges are masked

tilec::TensorView view(float* data, int64_t rows, int64_t cols, tilec::DeviceType device) {
  tilec::TensorView v;
  v.data = data;
  v.dtype = tilec::DType::Float32;
  v.shape = {rows, cols};
  v.strides = {cols, 1};
  v.device = device;
  return v;
}

// The largest |c - reference| over the largest |reference|.
double relative_error(const std::vector<float>& a, const std::vector<float>& b,
                      const std::vector<float>& c) {
  double worst = 0, scale = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += double(a[i * K + k]) * double(b[k * N + j]);
      worst = std::fmax(worst, std::fabs(c[i * N + j] - sum));
      scale = std::fmax(scale, std::fabs(sum));
    }
  return worst / scale;
}

tilec::Kernel compile_for(const std::string& target) {
  std::map<std::string, tilec::Value> sizes = {
      {"M", tilec::Value::of_int(M)}, {"N", tilec::Value::of_int(N)}, {"K", tilec::Value::of_int(K)}};
  tilec::FunctionSource matmul = tilec::load_function(kSource, "matmul.py", "matmul", sizes);
  return tilec::compile(matmul, {.target = target});
}

bool report(const char* target, double error) {
  bool right = error < 1e-5;  // float32 sums of 96 products
  std::printf("%-5s max relative error %.1e: %s\n", target, error, right ? "ok" : "WRONG");
  return right;
}

#ifdef TILEC_EXAMPLE_CUDA
bool run_on_cuda(const std::vector<float>& a, const std::vector<float>& b) {
  if (!tilec::cuda_available()) {
    std::printf("cuda  not run: %s\n", tilec::cuda_unavailable_reason().c_str());
    return true;
  }
  float *da, *db, *dc;
  cudaMalloc(&da, a.size() * sizeof(float));
  cudaMalloc(&db, b.size() * sizeof(float));
  cudaMalloc(&dc, M * N * sizeof(float));
  cudaMemcpy(da, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemset(dc, 0xff, M * N * sizeof(float));  // NaN: an element the kernel misses shows
  compile_for("cuda").launch({view(da, M, K, tilec::DeviceType::CUDA),
                              view(db, K, N, tilec::DeviceType::CUDA),
                              view(dc, M, N, tilec::DeviceType::CUDA)});
  std::vector<float> c(M * N);
  cudaError_t status = cudaMemcpy(c.data(), dc, c.size() * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  if (status != cudaSuccess) {
    std::printf("cuda  failed: %s\n", cudaGetErrorString(status));
    return false;
  }
  return report("cuda", relative_error(a, b, c));
}
#endif

}  // namespace

int main() {
  std::mt19937 random(20261205);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> a(M * K), b(K * N), c(M * N, NAN);
  for (float& x : a) x = uniform(random);
  for (float& x : b) x = uniform(random);

  try {
    std::printf("tilec %s: C[%lld x %lld] = A @ B, K = %lld\n", tilec::version(), (long long)M,
                (long long)N, (long long)K);
    compile_for("cpu").launch({view(a.data(), M, K, tilec::DeviceType::CPU),
                               view(b.data(), K, N, tilec::DeviceType::CPU),
                               view(c.data(), M, N, tilec::DeviceType::CPU)});
    bool right = report("cpu", relative_error(a, b, c));
#ifdef TILEC_EXAMPLE_CUDA
    right = run_on_cuda(a, b) && right;
#else
    std::printf("cuda  not built: CMake found no CUDA toolkit for this program\n");
#endif
    return right ? 0 : 1;
  } catch (const std::exception& e) {  // tilec::CompileError, tilec::ArgumentError, ...
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

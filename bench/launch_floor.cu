// The host's floor under bench/call_overhead.py's figures: the same tiny add kernel launched
// 10000 times back to back by the runtime (<<<>>>) and by cuLaunchKernel, and what one
// cuCtxGetCurrent costs. Medians of 5 runs, µs a call.
//
//   nvcc -O2 -arch=sm_90 -o /tmp/launch_floor bench/launch_floor.cu -lcuda && /tmp/launch_floor
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

__global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

template <class F> double us_per_call(F f, int calls) {
  std::vector<double> runs;
  for (int r = 0; r < 5; ++r) {
    cudaDeviceSynchronize();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) f();
    cudaDeviceSynchronize();
    runs.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls);
  }
  std::sort(runs.begin(), runs.end());
  return runs[2];
}

int main() {
  int n = 1024;
  float *a, *b, *c;
  cudaMalloc(&a, n * 4); cudaMalloc(&b, n * 4); cudaMalloc(&c, n * 4);
  cudaStream_t stream; cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  CUfunction f; cudaGetFuncBySymbol(reinterpret_cast<cudaFunction_t*>(&f), (const void*)add);
  void* args[] = {&a, &b, &c, &n};
  printf("runtime <<<>>> default stream: %.2f us\n", us_per_call([&] { add<<<4, 256>>>(a, b, c, n); }, 10000));
  printf("runtime <<<>>> own stream:     %.2f us\n", us_per_call([&] { add<<<4, 256, 0, stream>>>(a, b, c, n); }, 10000));
  printf("cuLaunchKernel own stream:     %.2f us\n",
         us_per_call([&] { cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, stream, args, nullptr); }, 10000));
  printf("cuCtxGetCurrent:               %.3f us\n", us_per_call([&] { CUcontext x; cuCtxGetCurrent(&x); }, 100000));
  return 0;
}

"""The tilec kernels the benchmarks run: the library's GEMM (tilec.ops), TileLang-style
source (T.copy to shared, T.gemm, T.Pipelined) with no target-specific code."""

from tilec.ops.gemm import fp8_matmul, matmul  # noqa: F401

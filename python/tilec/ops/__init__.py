"""The tilec kernel library: ready kernels called on tensors."""

from .gemm import fp8_gemm, fp8_matmul_bf16, gemm

__all__ = ["fp8_gemm", "fp8_matmul_bf16", "gemm"]

"""The tilec kernel library: ready kernels called on tensors."""

from .gemm import fp8_gemm, gemm

__all__ = ["fp8_gemm", "gemm"]

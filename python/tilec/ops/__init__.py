"""The tilec kernel library: ready kernels called on tensors."""

from .attention import flash_attention
from .gemm import fp8_gemm, fp8_matmul_bf16, gemm

__all__ = ["flash_attention", "fp8_gemm", "fp8_matmul_bf16", "gemm"]

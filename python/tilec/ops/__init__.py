"""The tilec kernel library: ready kernels called on tensors."""

from .attention import (flash_attention, flash_attention_backward, flash_attention_varlen,
                        flash_attention_varlen_backward)
from .gemm import fp8_gemm, fp8_matmul_bf16, gemm

__all__ = ["flash_attention", "flash_attention_backward", "flash_attention_varlen", "flash_attention_varlen_backward",
           "fp8_gemm", "fp8_matmul_bf16", "gemm"]

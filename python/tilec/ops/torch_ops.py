"""tilec.ops as torch custom ops, torch.ops.tilec.<name>, registered when this module is
imported (it needs torch); tilec.ops.dsa's ops (torch.ops.tilec.dsa_*) come with them.

Each runs the tilec.ops function of its name on the current stream. Its fake kernel gives the
outputs' shapes and types, so torch.compile(fullgraph=True) keeps a call in its graph, and
flash_attention and flash_attention_varlen are differentiable through their backward ops. The
arguments are the function's; flash_attention and flash_attention_varlen always return
(out, lse). Every op captures into CUDA graphs: none reads a GPU tensor on the host (the varlen
pair leave GPU offsets unchecked, as flash_attention_varlen says).
"""

from typing import Optional

import torch
from torch import Tensor
from torch.library import custom_op

from . import attention
from .gemm import fp8_gemm as _fp8_gemm, fp8_matmul_bf16 as _fp8_matmul_bf16, gemm as _gemm
from .dsa import torch_ops as _dsa_ops  # noqa: F401  (registers torch.ops.tilec.dsa_*)


def _matmul_fake(a, b_rows_are_n, b, dtype):
    """C [M, N] for a [M, K] and b [K, N] (or [N, K] where b_rows_are_n)."""
    n = b.shape[0] if b_rows_are_n else b.shape[1]
    return a.new_empty((a.shape[0], n), dtype=dtype)


@custom_op("tilec::gemm", mutates_args=())
def gemm(a: Tensor, b: Tensor) -> Tensor:
    return _gemm(a, b)


@gemm.register_fake
def _(a, b):
    return _matmul_fake(a, False, b, a.dtype)


@custom_op("tilec::fp8_matmul_bf16", mutates_args=())
def fp8_matmul_bf16(a: Tensor, b: Tensor) -> Tensor:
    return _fp8_matmul_bf16(a, b)


@fp8_matmul_bf16.register_fake
def _(a, b):
    return _matmul_fake(a, True, b, torch.bfloat16)


@custom_op("tilec::fp8_gemm", mutates_args=())
def fp8_gemm(a: Tensor, a_scale: Tensor, b: Tensor, b_scale: Tensor) -> Tensor:
    return _fp8_gemm(a, a_scale, b, b_scale)


@fp8_gemm.register_fake
def _(a, a_scale, b, b_scale):
    return _matmul_fake(a, True, b, torch.bfloat16)


def _lse_shape(q, layout):
    """flash_attention's log-sum-exp shape, [batch, heads, seq_q], for q in `layout`."""
    batch, first, second = q.shape[:3]
    return (batch, second, first) if layout == "bshd" else (batch, first, second)


@custom_op("tilec::flash_attention", mutates_args=())
def flash_attention(q: Tensor, k: Tensor, v: Tensor, causal: bool = False, sm_scale: Optional[float] = None,
                    layout: str = "bshd", num_splits: Optional[int] = None) -> tuple[Tensor, Tensor]:
    return attention._forward(q, k, v, causal, sm_scale, layout, num_splits)


@flash_attention.register_fake
def _(q, k, v, causal=False, sm_scale=None, layout="bshd", num_splits=None):
    return torch.empty_like(q), q.new_empty(_lse_shape(q, layout), dtype=torch.float32)


@custom_op("tilec::flash_attention_backward", mutates_args=())
def flash_attention_backward(q: Tensor, k: Tensor, v: Tensor, out: Tensor, lse: Tensor, dout: Tensor,
                             causal: bool = False, sm_scale: Optional[float] = None,
                             layout: str = "bshd") -> tuple[Tensor, Tensor, Tensor]:
    return attention.flash_attention_backward(q, k, v, out, lse, dout, causal, sm_scale, layout)


@flash_attention_backward.register_fake
def _(q, k, v, out, lse, dout, causal=False, sm_scale=None, layout="bshd"):
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def _save_attention(ctx, inputs, output):
    q, k, v, causal, sm_scale, layout, _ = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse)
    ctx.options = (causal, sm_scale, layout)
    ctx.mark_non_differentiable(lse)


def _attention_backward(ctx, dout, _dlse):
    q, k, v, out, lse = ctx.saved_tensors
    dq, dk, dv = flash_attention_backward(q, k, v, out, lse, dout.contiguous(), *ctx.options)
    return dq, dk, dv, None, None, None, None


flash_attention.register_autograd(_attention_backward, setup_context=_save_attention)


@custom_op("tilec::flash_attention_varlen", mutates_args=())
def flash_attention_varlen(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Tensor, cu_seqlens_k: Tensor,
                           max_seqlen_q: int, causal: bool = False, sm_scale: Optional[float] = None,
                           max_seqlen_k: Optional[int] = None) -> tuple[Tensor, Tensor]:
    return attention._forward_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, causal, sm_scale,
                                     max_seqlen_k)


@flash_attention_varlen.register_fake
def _(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, causal=False, sm_scale=None, max_seqlen_k=None):
    return torch.empty_like(q), q.new_empty((q.shape[1], q.shape[0]), dtype=torch.float32)


@custom_op("tilec::flash_attention_varlen_backward", mutates_args=())
def flash_attention_varlen_backward(q: Tensor, k: Tensor, v: Tensor, out: Tensor, lse: Tensor, dout: Tensor,
                                    cu_seqlens_q: Tensor, cu_seqlens_k: Tensor, max_seqlen_q: int,
                                    causal: bool = False, sm_scale: Optional[float] = None,
                                    max_seqlen_k: Optional[int] = None) -> tuple[Tensor, Tensor, Tensor]:
    return attention.flash_attention_varlen_backward(q, k, v, out, lse, dout, cu_seqlens_q, cu_seqlens_k,
                                                     max_seqlen_q, causal, sm_scale, max_seqlen_k)


@flash_attention_varlen_backward.register_fake
def _(q, k, v, out, lse, dout, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, causal=False, sm_scale=None,
      max_seqlen_k=None):
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def _save_varlen(ctx, inputs, output):
    q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, causal, sm_scale, max_seqlen_k = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k)
    ctx.options = (max_seqlen_q, causal, sm_scale, max_seqlen_k)
    ctx.mark_non_differentiable(lse)


def _varlen_backward(ctx, dout, _dlse):
    q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k = ctx.saved_tensors
    dq, dk, dv = flash_attention_varlen_backward(q, k, v, out, lse, dout.contiguous(), cu_seqlens_q, cu_seqlens_k,
                                                 *ctx.options)
    return dq, dk, dv, None, None, None, None, None, None


flash_attention_varlen.register_autograd(_varlen_backward, setup_context=_save_varlen)

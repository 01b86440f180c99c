"""tilec.ops.dsa as torch custom ops, torch.ops.tilec.dsa_<name>, registered when this module is
imported (it needs torch). Each runs the tilec.ops.dsa function of its name on the current
stream; its fake kernel gives the outputs' shapes and types, so torch.compile(fullgraph=True)
keeps a call in its graph instead of breaking there. The arguments are those of the function
(outputs are always returned, never written into given tensors).
"""

from typing import Optional

import torch
from torch import Tensor
from torch.library import custom_op

from . import (act_quant, attention_decode, attention_prefill, indexer_decode_logits, indexer_logits,
               sparse_mla_decode, sparse_mla_prefill, topk_indices)

FP8 = torch.float8_e4m3fn


@custom_op("tilec::dsa_act_quant", mutates_args=())
def dsa_act_quant(x: Tensor, block_size: int = 128, scale_fmt: Optional[str] = None) -> tuple[Tensor, Tensor]:
    return act_quant(x, block_size, scale_fmt)


@dsa_act_quant.register_fake
def _(x, block_size=128, scale_fmt=None):
    scales = (*x.shape[:-1], -(-x.shape[-1] // block_size))
    return x.new_empty(x.shape, dtype=FP8), x.new_empty(scales, dtype=torch.float32)


@custom_op("tilec::dsa_indexer_logits", mutates_args=())
def dsa_indexer_logits(q: Tensor, k: Tensor, k_scale: Tensor, weights: Tensor, ks: Tensor, ke: Tensor,
                       max_len: Optional[int] = None) -> Tensor:
    return indexer_logits(q, k, k_scale, weights, ks, ke, max_len)


@dsa_indexer_logits.register_fake
def _(q, k, k_scale, weights, ks, ke, max_len=None):
    return q.new_empty((q.shape[0], max_len or k.shape[0]), dtype=torch.float32)


@custom_op("tilec::dsa_indexer_decode_logits", mutates_args=())
def dsa_indexer_decode_logits(q: Tensor, kv_cache: Tensor, weights: Tensor, block_table: Tensor,
                              context_lens: Tensor) -> Tensor:
    return indexer_decode_logits(q, kv_cache, weights, block_table, context_lens)


@dsa_indexer_decode_logits.register_fake
def _(q, kv_cache, weights, block_table, context_lens):
    return q.new_empty((q.shape[0] * q.shape[1], block_table.shape[1] * 64), dtype=torch.float32)


@custom_op("tilec::dsa_topk_indices", mutates_args=())
def dsa_topk_indices(logits: Tensor, k: int, ks: Optional[Tensor] = None, ke: Optional[Tensor] = None,
                     block_table: Optional[Tensor] = None, next_n: int = 1, page_size: int = 64) -> Tensor:
    return topk_indices(logits, k, ks, ke, block_table, next_n, page_size)


@dsa_topk_indices.register_fake
def _(logits, k, ks=None, ke=None, block_table=None, next_n=1, page_size=64):
    return logits.new_empty((logits.shape[0], k), dtype=torch.int32)


@custom_op("tilec::dsa_sparse_mla_prefill", mutates_args=())
def dsa_sparse_mla_prefill(q: Tensor, kv: Tensor, indices: Tensor, sm_scale: Optional[float] = None,
                           d_v: int = 512) -> tuple[Tensor, Tensor]:
    return sparse_mla_prefill(q, kv, indices, sm_scale, d_v)


@dsa_sparse_mla_prefill.register_fake
def _(q, kv, indices, sm_scale=None, d_v=512):
    S, heads = q.shape[:2]
    return q.new_empty((S, heads, d_v)), q.new_empty((S, heads), dtype=torch.float32)


@custom_op("tilec::dsa_sparse_mla_decode", mutates_args=())
def dsa_sparse_mla_decode(q: Tensor, kv_cache: Tensor, indices: Tensor,
                          sm_scale: Optional[float] = None) -> tuple[Tensor, Tensor]:
    return sparse_mla_decode(q, kv_cache, indices, sm_scale)


@dsa_sparse_mla_decode.register_fake
def _(q, kv_cache, indices, sm_scale=None):
    B, s_q, heads = q.shape[:3]
    return q.new_empty((B, s_q, heads, 512)), q.new_empty((B, heads, s_q), dtype=torch.float32)


@custom_op("tilec::dsa_attention_prefill", mutates_args=())
def dsa_attention_prefill(index_q: Tensor, index_weights: Tensor, index_k: Tensor, index_k_scale: Tensor, q: Tensor,
                          kv: Tensor, cu_seqlens_q: Optional[Tensor] = None, cu_seqlens_kv: Optional[Tensor] = None,
                          topk: int = 2048, sm_scale: Optional[float] = None, d_v: int = 512,
                          chunk: int = 4096) -> tuple[Tensor, Tensor, Tensor]:
    return attention_prefill(index_q, index_weights, index_k, index_k_scale, q, kv, cu_seqlens_q, cu_seqlens_kv,
                             topk, sm_scale, d_v, chunk)


@dsa_attention_prefill.register_fake
def _(index_q, index_weights, index_k, index_k_scale, q, kv, cu_seqlens_q=None, cu_seqlens_kv=None, topk=2048,
      sm_scale=None, d_v=512, chunk=4096):
    S, heads = q.shape[:2]
    return (q.new_empty((S, heads, d_v)), q.new_empty((S, heads), dtype=torch.float32),
            q.new_empty((S, topk), dtype=torch.int32))


@custom_op("tilec::dsa_attention_decode", mutates_args=())
def dsa_attention_decode(index_q: Tensor, index_weights: Tensor, index_cache: Tensor, q: Tensor, kv_cache: Tensor,
                         block_table: Tensor, context_lens: Tensor, topk: int = 2048,
                         sm_scale: Optional[float] = None) -> tuple[Tensor, Tensor, Tensor]:
    return attention_decode(index_q, index_weights, index_cache, q, kv_cache, block_table, context_lens, topk,
                            sm_scale)


@dsa_attention_decode.register_fake
def _(index_q, index_weights, index_cache, q, kv_cache, block_table, context_lens, topk=2048, sm_scale=None):
    B, next_n, heads = q.shape[:3]
    return (q.new_empty((B, next_n, heads, 512)), q.new_empty((B, heads, next_n), dtype=torch.float32),
            q.new_empty((B * next_n, topk), dtype=torch.int32))

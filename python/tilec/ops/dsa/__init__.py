"""DeepSeek Sparse Attention (DSA) kernels in the tilec language: what each computes and how it
is judged is in docs/dsa.md."""

from .indexer import indexer_decode_logits, indexer_logits
from .quant import act_quant
from .sparse_mla import sparse_mla_decode, sparse_mla_prefill
from .step import attention_decode, attention_prefill
from .topk import topk_indices

__all__ = ["act_quant", "attention_decode", "attention_prefill", "indexer_decode_logits", "indexer_logits",
           "sparse_mla_decode", "sparse_mla_prefill", "topk_indices"]

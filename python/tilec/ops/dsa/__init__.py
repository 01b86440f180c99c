"""DeepSeek Sparse Attention (DSA) kernels: what ../shared/DSA.md specifies, in the tilec language."""

from .indexer import indexer_logits
from .quant import act_quant
from .sparse_mla import sparse_mla_decode, sparse_mla_prefill
from .step import attention_prefill
from .topk import topk_indices

__all__ = ["act_quant", "attention_prefill", "indexer_logits", "sparse_mla_decode", "sparse_mla_prefill",
           "topk_indices"]

"""DeepSeek Sparse Attention (DSA) kernels: what ../shared/DSA.md specifies, in the tilec language."""

from .indexer import indexer_logits
from .quant import act_quant
from .topk import topk_indices

__all__ = ["act_quant", "indexer_logits", "topk_indices"]

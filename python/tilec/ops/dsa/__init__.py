"""DeepSeek Sparse Attention (DSA) kernels: what ../shared/DSA.md specifies, in the tilec language."""

from .indexer import indexer_logits
from .quant import act_quant

__all__ = ["act_quant", "indexer_logits"]

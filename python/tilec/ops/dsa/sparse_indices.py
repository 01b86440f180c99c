"""The top-k indices' convention the sparse attention kernels read: a row's entries name key
tokens; one that is negative, not below the key count, or past the row's topk is invalid."""

import tilec.language as T


@T.macro
def index_at(Indices, row, slot, topk, keys):
    # Indices[row, slot]; -1 past topk and for an invalid one.
    index = T.if_then_else(slot < topk, Indices[row, T.min(slot, topk - 1)], -1)
    return T.if_then_else((index >= 0) & (index < keys), index, -1)

"""What the sparse attention kernels share: the top-k indices' convention (a row's entries name
key tokens; one that is negative, not below the key count, or past the row's topk is invalid),
and the order their programs take a query token's head blocks in."""

import tilec.language as T


@T.macro
def index_at(Indices, row, slot, topk, keys):
    # Indices[row, slot]; -1 past topk and for an invalid one.
    index = T.if_then_else(slot < topk, Indices[row, T.min(slot, topk - 1)], -1)
    return T.if_then_else((index >= 0) & (index < keys), index, -1)


@T.macro
def token_and_head_block(program, head_blocks):
    # A kernel of tokens * head_blocks programs: a token's head blocks are consecutive programs,
    # so they run at once and all but the first read the token's indexed keys from L2.
    return program // head_blocks, program % head_blocks

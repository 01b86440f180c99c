"""Values read out of a paged cache's bytes (a uint8 tensor [rows, bytes]): DSA's caches keep
float32 scales and bfloat16 RoPE dims beside float8 values, little-endian."""

import tilec.language as T


@T.macro
def float32_at(Cache, row, at):
    # The float32 whose 4 bytes start at Cache[row, at].
    bits = (T.Cast("uint32", Cache[row, at]) | (T.Cast("uint32", Cache[row, at + 1]) << 8)
            | (T.Cast("uint32", Cache[row, at + 2]) << 16) | (T.Cast("uint32", Cache[row, at + 3]) << 24))
    return T.reinterpret(bits, "float32")


@T.macro
def bfloat16_at(Cache, row, at):
    # The bfloat16 whose 2 bytes start at Cache[row, at].
    bits = T.Cast("uint16", Cache[row, at]) | (T.Cast("uint16", Cache[row, at + 1]) << 8)
    return T.reinterpret(bits, "bfloat16")

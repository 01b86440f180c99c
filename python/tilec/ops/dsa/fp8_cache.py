"""DeepSeek-V3.2's FP8 KV cache (FlashMLA's sparse decode reads it): a token in 656 bytes, its
512 latent dims as float8_e4m3, their 4 float32 scales (one a 128 dims), then its 64 RoPE dims
as bfloat16, little-endian. The kernels take a cache as [slots, 656] bytes, and read parts of
it through views of the same memory as the types they hold."""

FP8_DIM, FP8_TAIL, FP8_GROUP = 512, 64, 128
FP8_TOKEN_BYTES = FP8_DIM + 4 * (FP8_DIM // FP8_GROUP) + 2 * FP8_TAIL
FP8_ROPE_AT = (FP8_DIM + 4 * (FP8_DIM // FP8_GROUP)) // 2  # a token's first RoPE dim, in bfloat16 elements


def _dtype_in_library_of(tensor, name):
    """The dtype `name` ("uint8", "float32", "bfloat16") in `tensor`'s library (torch or NumPy)."""
    if hasattr(tensor, "new_empty"):
        import torch  # noqa: PLC0415

        return getattr(torch, name)
    import ml_dtypes  # noqa: PLC0415
    import numpy  # noqa: PLC0415

    return ml_dtypes.bfloat16 if name == "bfloat16" else numpy.dtype(name)


def as_bytes(cache):
    """A cache of float8_e4m3 or uint8 elements as uint8, the same memory."""
    return cache.view(_dtype_in_library_of(cache, "uint8"))


def scales_and_rope(cache):
    """A [slots, 656] uint8 cache read as float32 ([slots, 164]: a token's scales at 128..131)
    and as bfloat16 ([slots, 1, 328]: its RoPE dims at FP8_ROPE_AT = 264..327): views, no copy."""
    slots = cache.shape[0]
    return (cache.view(_dtype_in_library_of(cache, "float32")).reshape(slots, FP8_TOKEN_BYTES // 4),
            cache.view(_dtype_in_library_of(cache, "bfloat16")).reshape(slots, 1, FP8_TOKEN_BYTES // 2))

"""act_quant: DeepSeek-V3.2's per-block FP8 quantization of activations.

Each row's every `block_size` columns share one float32 scale s = max(amax, 1e-4) / 448, or that
rounded up to a power of two (scale_fmt "ue8m0", DeepSeek-V3.2's released config), and become
y = clamp(x / s, -448, 448) in float8_e4m3. A last, partial block's scale covers its columns alone.
"""

import tilec
import tilec.language as T
from tilec import capture

from ..device import for_device_of

FP8_MAX = 448.0  # float8_e4m3fn's largest finite value
MIN_AMAX = 1e-4  # an all-zero block still gets a usable scale
SCALE_FORMATS = (None, "ue8m0")


@tilec.jit(out_idx=[1, 2])
def act_quant_kernel(N, dtype, block_size=128, pow2_scale=False, block_M=32, threads=128):
    M = T.symbolic("M")  # one kernel for every row count
    groups = T.ceildiv(N, block_size)

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), "float8_e4m3"),
             S: T.Tensor((M, groups), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), groups, threads=threads) as (bx, by):
            x = T.alloc_fragment((block_M, block_size), "float32")
            y = T.alloc_fragment((block_M, block_size), "float8_e4m3")
            amax = T.alloc_fragment((block_M,), "float32")
            scale = T.alloc_fragment((block_M,), "float32")
            T.copy(X[bx * block_M, by * block_size], x)
            T.reduce_absmax(x, amax, dim=1)
            for i in T.Parallel(block_M):
                exact = T.max(amax[i], MIN_AMAX) / FP8_MAX
                if pow2_scale:
                    # 2^ceil(log2(exact)) from the bits, exactly: the exponent, one up when any
                    # mantissa bit is set. (exact is a normal float: at least 1e-4 / 448.)
                    bits = T.reinterpret(exact, "uint32")
                    exponent = (bits >> 23) + T.if_then_else((bits & 0x7FFFFF) != 0, 1, 0)
                    scale[i] = T.reinterpret(exponent << 23, "float32")
                else:
                    scale[i] = exact
            for i, j in T.Parallel(block_M, block_size):
                y[i, j] = T.clamp(x[i, j] / scale[i], -FP8_MAX, FP8_MAX)
            T.copy(y, Y[bx * block_M, by * block_size])
            for i in T.Parallel(block_M):
                if bx * block_M + i < M:
                    S[bx * block_M + i, by] = scale[i]

    return main


def act_quant(x, block_size=128, scale_fmt=None):
    """(y, s): x quantized to float8_e4m3 in blocks of `block_size` along its last dim, and
    the blocks' float32 scales, so that x ~= y * s (each scale repeated over its block).

    x: float32, float16 or bfloat16, any leading dims, N columns. y has x's shape; s has
    x.shape[:-1] + (ceil(N / block_size),). scale_fmt None gives s = max(amax, 1e-4) / 448;
    "ue8m0" rounds s up to a power of two. block_size is a power of two from 16 to 512."""
    if scale_fmt not in SCALE_FORMATS:
        raise ValueError(f"scale_fmt must be None or 'ue8m0', not {scale_fmt!r}")
    if isinstance(block_size, bool) or not isinstance(block_size, int) or not 16 <= block_size <= 512 \
            or block_size & (block_size - 1):
        raise ValueError(f"block_size must be a power of two from 16 to 512, not {block_size!r}")
    dtype = capture.tensor_dtype_name(x)
    if dtype not in ("float32", "float16", "bfloat16"):
        raise ValueError(f"x must be float32, float16 or bfloat16, not {dtype}")
    shape = tuple(x.shape)
    if len(shape) < 1 or 0 in shape:
        raise ValueError(f"x must have at least one dim and no empty one, not shape {shape}")
    N = shape[-1]
    M = 1
    for d in shape[:-1]:
        M *= d
    y, s = for_device_of(x, act_quant_kernel)(N, dtype, block_size=block_size, pow2_scale=scale_fmt == "ue8m0")(
        x.reshape(M, N))
    return y.reshape(shape), s.reshape(shape[:-1] + (s.shape[-1],))

"""GEMM library kernels: C = A @ B (fp16/bf16) and the DeepSeek block-scaled FP8 GEMM.

The kernels are ordinary tilec source (T.copy into shared tiles, T.gemm, T.Pipelined), so they
run wherever tilec runs: tensor cores on NVIDIA GPUs, the CPU backend elsewhere.
"""

import tilec
import tilec.language as T
from tilec import capture

from .device import for_device_of, is_hopper

# The tile configuration gemm() uses (bench/gemm.py sweeps others): on Hopper, 128 x 256 tiles
# for two consumer warpgroups on wgmma, three stages so that the C tile of the stmatrix + TMA
# store epilogue fits beside them in a persistent block (bench/RESULTS.md); elsewhere tiles
# that fit the shared memory of every GPU from sm_80.
HOPPER_GEMM_CONFIG = dict(block_M=128, block_N=256, block_K=64, num_stages=3, threads=256, panel=8,
                          shared_epilogue=True)
DEFAULT_GEMM_CONFIG = dict(block_M=128, block_N=128, block_K=32, num_stages=4, threads=128, panel=0,
                           shared_epilogue=False)


def _default_config(tensor):
    return HOPPER_GEMM_CONFIG if is_hopper(tensor) else DEFAULT_GEMM_CONFIG


@tilec.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=128, block_K=32, dtype="bfloat16", accum_dtype="float32",
           num_stages=3, threads=128, panel=0, shared_epilogue=False, trans_B=False):
    # shared_epilogue: C goes out through a shared tile (on Hopper: stmatrix, then a TMA store).
    # trans_B: C = A @ B^T with B [N, K] (both operands K-major, as Hopper's tensor cores need
    # for float32 (tf32) and fp8 operands).
    B_shape, B_tile = ((N, K), (block_N, block_K)) if trans_B else ((K, N), (block_K, block_N))

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor(B_shape, dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            if panel:
                T.use_swizzle(panel)
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared(B_tile, dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], B_shared)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=trans_B)
            if shared_epilogue:
                C_shared = T.alloc_shared((block_M, block_N), dtype)
                T.copy(C_local, C_shared)
                T.copy(C_shared, C[by * block_M, bx * block_N])
            else:
                T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@tilec.jit(out_idx=[-1])
def fp8_matmul(M, N, K, block_M=128, block_N=256, block_K=128, num_stages=3, threads=256, panel=8,
               shared_epilogue=True):
    # C = A @ B^T: fp8 tensor cores read both operands K-major, so B is [N, K].
    @T.prim_func
    def main(A: T.Tensor((M, K), "float8_e4m3"), B: T.Tensor((N, K), "float8_e4m3"),
             C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            if panel:
                T.use_swizzle(panel)
            A_shared = T.alloc_shared((block_M, block_K), "float8_e4m3")
            B_shared = T.alloc_shared((block_N, block_K), "float8_e4m3")
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            if shared_epilogue:
                C_shared = T.alloc_shared((block_M, block_N), "bfloat16")
                T.copy(C_local, C_shared)
                T.copy(C_shared, C[by * block_M, bx * block_N])
            else:
                T.copy(C_local, C[by * block_M, bx * block_N])

    return main


# The scale blocks of DeepSeek's FP8 GEMM (../DSA.md section 5).
FP8_BLOCK = 128


@tilec.jit(out_idx=[-1])
def fp8_block_scaled_matmul(M, N, K, block_M=128, threads=256, num_stages=3):
    # Each k step is one scale block: its fp32 partial product is promoted into the
    # accumulator with the row's A scale and the (n, k) block's B scale.
    block_N = block_K = FP8_BLOCK
    k_blocks = T.ceildiv(K, FP8_BLOCK)

    @T.prim_func
    def main(A: T.Tensor((M, K), "float8_e4m3"), A_scale: T.Tensor((M, k_blocks), "float32"),
             B: T.Tensor((N, K), "float8_e4m3"), B_scale: T.Tensor((T.ceildiv(N, FP8_BLOCK), k_blocks), "float32"),
             C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), "float8_e4m3")
            B_shared = T.alloc_shared((block_N, block_K), "float8_e4m3")
            partial = T.alloc_fragment((block_M, block_N), "float32")
            acc = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(acc)
            for k in T.Pipelined(k_blocks, num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                T.gemm(A_shared, B_shared, partial, transpose_B=True, clear_accum=True)
                for i, j in T.Parallel(block_M, block_N):
                    if by * block_M + i < M:
                        acc[i, j] = acc[i, j] + partial[i, j] * A_scale[by * block_M + i, k] * B_scale[bx, k]
            T.copy(acc, C[by * block_M, bx * block_N])

    return main


def _matrix_shape(tensor, name):
    shape = tuple(tensor.shape)
    if len(shape) != 2:
        raise ValueError(f"{name} must be a matrix (2 dims), not {len(shape)} dims {shape}")
    return shape


def gemm(a, b, **config):
    """C = A @ B for A [M, K] and B [K, N] of one 16-bit float type (float16 or bfloat16),
    accumulated in float32; returns C [M, N] in that type, as A's library allocates it.
    `config` overrides DEFAULT_GEMM_CONFIG's tile sizes."""
    (M, K), (K_b, N) = _matrix_shape(a, "a"), _matrix_shape(b, "b")
    if K_b != K:
        raise ValueError(f"b has {K_b} rows but a has {K} columns: a [M, K] @ b [K, N] needs them equal")
    dtype = capture.tensor_dtype_name(a)
    if dtype not in ("float16", "bfloat16") or capture.tensor_dtype_name(b) != dtype:
        raise ValueError(f"gemm takes a and b of one type, float16 or bfloat16 (got {dtype} and "
                         f"{capture.tensor_dtype_name(b)})")
    unknown = set(config) - set(DEFAULT_GEMM_CONFIG)
    if unknown:
        raise ValueError(f"unknown gemm config {sorted(unknown)}; known: {sorted(DEFAULT_GEMM_CONFIG)}")
    return for_device_of(a, matmul)(M, N, K, dtype=dtype, **{**_default_config(a), **config})(a, b)


def fp8_matmul_bf16(a, b):
    """C = A @ B^T in bfloat16 for a [M, K] and b [N, K] float8_e4m3, accumulated in float32
    (no scales: torch._scaled_mm's with unit scales)."""
    (M, K), (N, K_b) = _matrix_shape(a, "a"), _matrix_shape(b, "b")
    if K_b != K:
        raise ValueError(f"b has {K_b} columns but a has {K}: a [M, K] and b [N, K] share K")
    for name, t in (("a", a), ("b", b)):
        # The canonical name: torch and ml_dtypes call the type float8_e4m3fn.
        if str(T.dtype(capture.tensor_dtype_name(t))) != "float8_e4m3":
            raise ValueError(f"{name} must be float8_e4m3, not {capture.tensor_dtype_name(t)}")
    return for_device_of(a, fp8_matmul)(M, N, K)(a, b)


def fp8_gemm(a, a_scale, b, b_scale):
    """DeepSeek's block-scaled FP8 GEMM: C = (A * a_scale) @ (B * b_scale)^T in bfloat16.

    a [M, K] float8_e4m3 with a_scale [M, ceil(K / 128)] float32 (one scale per row and
    128-wide k block); b [N, K] float8_e4m3 with b_scale [ceil(N / 128), ceil(K / 128)]
    float32 (one per 128 x 128 block). Each k block's product is accumulated in float32 and
    promoted into the float32 result with its scales."""
    (M, K), (N, K_b) = _matrix_shape(a, "a"), _matrix_shape(b, "b")
    if K_b != K:
        raise ValueError(f"b has {K_b} columns but a has {K}: a [M, K] and b [N, K] share K")
    blocks = -(-K // FP8_BLOCK)
    expected = {"a_scale": (M, blocks), "b_scale": (-(-N // FP8_BLOCK), blocks)}
    for name, scale in (("a_scale", a_scale), ("b_scale", b_scale)):
        if tuple(scale.shape) != expected[name]:
            raise ValueError(f"{name} must have shape {expected[name]} (one scale per "
                             f"{'row and 128 columns' if name == 'a_scale' else '128 x 128 block'}), "
                             f"not {tuple(scale.shape)}")
    return for_device_of(a, fp8_block_scaled_matmul)(M, N, K)(a, a_scale, b, b_scale)

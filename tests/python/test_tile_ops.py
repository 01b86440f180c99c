"""Each tile operation against NumPy on the backend under test.

Shapes include sizes that are not multiples of the block (61, 100, 1), so the
edge rules of T.copy are exercised everywhere: reads outside a tensor give 0,
writes outside it are dropped.
"""

import numpy as np
import pytest

import tilec
import tilec.language as T

from helpers import RTOL, assert_close, jit, np_dtype, poison, rand, rng  # noqa: F401  (rng is a fixture)

SHAPES_2D = [(32, 32), (48, 61), (61, 100), (100, 1), (1, 48)]


# --- T.copy ----------------------------------------------------------------------

@jit
def copy_point_form(M, N, block_M, block_N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_N), "float32")
            T.copy(A[by * block_M, bx * block_N], A_s)
            T.copy(A_s, B[by * block_M, bx * block_N])

    return main


@pytest.mark.parametrize("M,N", SHAPES_2D)
@pytest.mark.parametrize("block_M,block_N", [(32, 32), (16, 64)])
def test_copy_global_shared_global_point_form(M, N, block_M, block_N, rng):
    kernel = copy_point_form(M, N, block_M, block_N)
    a = rand((M, N), "float32", rng)
    b = poison((M, N), "float32")
    assert kernel(a, b) is None
    assert_close(b, a, "float32", exact=True)


@jit
def copy_slice_form(M, N, block_M, block_N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_N), "float32")
            A_f = T.alloc_fragment((block_M, block_N), "float32")
            B_s = T.alloc_shared((block_M, block_N), "float32")
            T.copy(A[by * block_M:(by + 1) * block_M, bx * block_N:(bx + 1) * block_N], A_s)
            T.copy(A_s, A_f)
            T.copy(A_f, B_s)
            T.copy(B_s, B[by * block_M:(by + 1) * block_M, bx * block_N:(bx + 1) * block_N])

    return main


@pytest.mark.parametrize("M,N", SHAPES_2D)
def test_copy_slice_form_through_shared_and_fragment(M, N, rng):
    kernel = copy_slice_form(M, N, 32, 32)
    a = rand((M, N), "float32", rng)
    b = poison((M, N), "float32")
    kernel(a, b)
    assert_close(b, a, "float32", exact=True)


# TileLang's keywords say what a copy may run on, or give hints; the result is the same.
@jit
def copy_with_keywords(M, N, block_M, block_N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_N), "float32")
            B_s = T.alloc_shared((block_M, block_N), "float32")
            T.copy(A[by * block_M, bx * block_N], A_s, disable_tma=True, coalesced_width=4)
            T.copy(A_s, B_s, prefer_instruction="sync", eviction_policy="evict_first")
            T.copy(B_s, B[by * block_M, bx * block_N], prefer_instruction="cp_async")

    return main


@pytest.mark.parametrize("M,N", [(48, 61), (64, 64)])
def test_copy_keywords_keep_the_result(M, N, rng):
    a = rand((M, N), "float32", rng)
    b = poison((M, N), "float32")
    copy_with_keywords(M, N, 32, 32)(a, b)
    assert_close(b, a, "float32", exact=True)


@jit
def copy_via_fragment(M, N, block_M, block_N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_f = T.alloc_fragment((block_M, block_N), "float32")
            T.copy(A[by * block_M, bx * block_N], A_f)
            T.copy(A_f, B[by * block_M, bx * block_N])

    return main


@pytest.mark.parametrize("M,N", [(32, 32), (61, 100)])
def test_copy_global_fragment_global(M, N, rng):
    kernel = copy_via_fragment(M, N, 32, 32)
    a = rand((M, N), "float32", rng)
    b = poison((M, N), "float32")
    kernel(a, b)
    assert_close(b, a, "float32", exact=True)


@jit
def copy_at_a_row_held_in_a_fragment(M, N, tile):
    """The row a T.copy starts at is a kernel scalar held in a 1-element fragment (TileLang's
    stream-K GEMM keeps its iteration so): the copy's addresses read it on every thread."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), start: T.Tensor((1,), "int32"), O: T.Tensor((tile, N), "float16")):
        with T.Kernel(1, threads=128) as bx:
            row = T.alloc_fragment((1,), "int32", "local")
            A_s = T.alloc_shared((tile, N), "float16")
            row[0] = start[0]
            T.copy(A[row[0] % M, 0], A_s)
            T.copy(A_s, O)

    return main


def test_a_copy_at_a_row_held_in_a_fragment(rng):
    M, N, tile = 64, 64, 16
    a = rand((M, N), "float16", rng)
    o = poison((tile, N), "float16")
    copy_at_a_row_held_in_a_fragment(M, N, tile)(a, np.array([37], dtype=np.int32), o)
    expected = np.zeros((tile, N), dtype=np.float16)
    expected[:M - 37] = a[37:37 + tile]
    assert_close(o, expected, "float16", exact=True)


@jit
def copy_read_past_edge(M, N, r0, c0, tile):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), O: T.Tensor((tile, tile), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((tile, tile), "float32")
            T.copy(A[r0, c0], A_s)
            T.copy(A_s, O)

    return main


@pytest.mark.parametrize("r0,c0", [(0, 0), (8, 4), (19, 12), (20, 0), (0, 13)])
def test_copy_reads_outside_the_tensor_give_zero(r0, c0, rng):
    M, N, tile = 20, 13, 32
    # A is the head of a larger buffer whose tail is non-zero: a read past A's
    # end that isn't masked shows up as a non-zero value.
    storage = np.full(M * N + 4096, 7.0, dtype=np.float32)
    storage[:M * N] = rand(M * N, "float32", rng)
    a = storage[:M * N].reshape(M, N)
    o = poison((tile, tile), "float32")
    copy_read_past_edge(M, N, r0, c0, tile)(a, o)
    expected = np.zeros((tile, tile))
    block = a[r0:r0 + tile, c0:c0 + tile]
    expected[:block.shape[0], :block.shape[1]] = block
    assert_close(o, expected, "float32", exact=True)


@jit
def copy_write_past_edge(M, N, r0, c0, tile):
    @T.prim_func
    def main(X: T.Tensor((tile, tile), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            X_s = T.alloc_shared((tile, tile), "float32")
            T.copy(X, X_s)
            T.copy(X_s, B[r0, c0])

    return main


@pytest.mark.parametrize("r0,c0", [(0, 0), (8, 4), (19, 12)])
def test_copy_writes_outside_the_tensor_are_dropped(r0, c0, rng):
    M, N, tile = 20, 13, 32
    # B is the head of a larger poisoned buffer: a write past B's end shows in the tail.
    storage = poison(M * N + 4096, "float32")
    b = storage[:M * N].reshape(M, N)
    x = rand((tile, tile), "float32", rng)
    copy_write_past_edge(M, N, r0, c0, tile)(x, b)
    expected = np.full((M, N), np.nan)
    h, w = min(tile, M - r0), min(tile, N - c0)
    expected[r0:r0 + h, c0:c0 + w] = x[:h, :w]
    assert_close(b, expected, "float32", exact=True)
    assert np.isnan(storage[M * N:]).all(), "the kernel wrote past the end of B"


@jit
def copy_point_form_lower_rank(G, M, N):
    @T.prim_func
    def main(X: T.Tensor((G, M, N), "float32"), Y: T.Tensor((G, M, N), "float32"),
             R: T.Tensor((G, N), "float32")):
        with T.Kernel(G, threads=128) as g:
            X_f = T.alloc_fragment((M, N), "float32")
            row_s = T.alloc_shared((N,), "float32")
            # The point index takes the other operand's shape, right-aligned:
            # X[g, 0, 0] -> X[g, 0:M, 0:N] and X[g, 2, 0] -> X[g, 2, 0:N].
            T.copy(X[g, 0, 0], X_f)
            T.copy(X_f, Y[g, 0, 0])
            T.copy(X[g, 2, 0], row_s)
            T.copy(row_s, R[g, 0])

    return main


def test_copy_point_form_takes_the_other_operands_shape(rng):
    G, M, N = 5, 4, 24
    x = rand((G, M, N), "float32", rng)
    y = poison((G, M, N), "float32")
    r = poison((G, N), "float32")
    copy_point_form_lower_rank(G, M, N)(x, y, r)
    assert_close(y, x, "float32", exact=True)
    assert_close(r, x[:, 2, :], "float32", exact=True)


@jit
def copy_global_regions(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, 8), "float32")):
        with T.Kernel(1, threads=128) as bx:
            T.copy(A[0:M, 8:16], B[0:M, 0:8])

    return main


def test_copy_region_to_region_between_global_tensors(rng):
    M, N = 10, 20
    a = rand((M, N), "float32", rng)
    b = poison((M, 8), "float32")
    copy_global_regions(M, N)(a, b)
    assert_close(b, a[:, 8:16], "float32", exact=True)


@jit
def rows_through_a_fragment(M, N, block_m):
    # TileLang's rms_norm: slices written as start:end, whose extent ((bx + 1) * m - bx * m)
    # is block_m; with block_m = 1 the (1, N) slice fills a (1, N) fragment.
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_m), threads=128) as bx:
            A_local = T.alloc_fragment((block_m, N), "float32")
            T.copy(A[bx * block_m:(bx + 1) * block_m, :], A_local)
            for i, j in T.Parallel(block_m, N):
                A_local[i, j] = A_local[i, j] * 3
            T.copy(A_local, B[bx * block_m:(bx + 1) * block_m, :])

    return main


@pytest.mark.parametrize("block_m", [1, 4])
def test_copy_of_slices_written_as_start_and_end(block_m, rng):
    a = rand((16, 256), "float32", rng)
    b = poison((16, 256), "float32")
    rows_through_a_fragment(16, 256, block_m)(a, b)
    assert_close(b, a.astype(np.float64) * 3, "float32")


# --- T.clear / T.fill ----------------------------------------------------------

@jit
def fill_and_clear(M, N, value):
    @T.prim_func
    def main(S: T.Tensor((1,), "float32"), F: T.Tensor((M, N), "float32"),
             Z: T.Tensor((M, N), "float32"), R: T.Tensor((M, N), "float32"),
             L: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            f = T.alloc_fragment((M, N), "float32")
            z = T.alloc_shared((M, N), "float32")
            r = T.alloc_fragment((M, N), "float32")
            loc = T.alloc_local((4,), "float32")
            T.fill(f, value)
            T.copy(f, F)
            T.fill(z, value)
            T.clear(z)
            T.copy(z, Z)
            T.fill(r, S[0] * 2)
            T.copy(r, R)
            T.fill(loc, value + 1)
            for i in T.serial(4):
                L[i] = loc[i]

    return main


@pytest.mark.parametrize("M,N", [(32, 32), (17, 5)])
@pytest.mark.parametrize("value", [2.5, -1.25])
def test_fill_and_clear(M, N, value, rng):
    s = rand(1, "float32", rng)
    f, z, r = (poison((M, N), "float32") for _ in range(3))
    loc = poison(4, "float32")
    fill_and_clear(M, N, value)(s, f, z, r, loc)
    assert_close(f, np.full((M, N), value), "float32", exact=True)
    assert_close(z, np.zeros((M, N)), "float32", exact=True)
    assert_close(r, np.full((M, N), np.float32(s[0] * 2)), "float32", exact=True)
    assert_close(loc, np.full(4, value + 1), "float32", exact=True)


@jit
def fill_int(n, value):
    @T.prim_func
    def main(F: T.Tensor((n,), "int32")):
        with T.Kernel(1, threads=128) as bx:
            f = T.alloc_fragment((n,), "int32")
            T.fill(f, value)
            T.copy(f, F)

    return main


def test_fill_int():
    f = poison(40, "int32")
    fill_int(40, -7)(f)
    assert_close(f, np.full(40, -7), "int32")


# --- T.gemm --------------------------------------------------------------------

@jit
def matmul(M, N, K, block_M=32, block_N=32, block_K=32, trans_A=False, trans_B=False,
           in_dtype="float32", accum_dtype="float32", num_stages=2):
    A_shape = (K, M) if trans_A else (M, K)
    B_shape = (N, K) if trans_B else (K, N)
    A_tile = (block_K, block_M) if trans_A else (block_M, block_K)
    B_tile = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def main(A: T.Tensor(A_shape, in_dtype), B: T.Tensor(B_shape, in_dtype),
             C: T.Tensor((M, N), accum_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared(A_tile, in_dtype)
            B_s = T.alloc_shared(B_tile, in_dtype)
            C_f = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                if trans_A:
                    T.copy(A[k * block_K, by * block_M], A_s)
                else:
                    T.copy(A[by * block_M, k * block_K], A_s)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], B_s)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_f, transpose_A=trans_A, transpose_B=trans_B)
            T.copy(C_f, C[by * block_M, bx * block_N])

    return main


def check_matmul(M, N, K, rng, *, in_dtype="float32", accum_dtype="float32", trans_A=False,
                 trans_B=False, **blocks):
    kernel = matmul(M, N, K, trans_A=trans_A, trans_B=trans_B, in_dtype=in_dtype,
                    accum_dtype=accum_dtype, **blocks)
    a = rand((K, M) if trans_A else (M, K), in_dtype, rng)
    b = rand((N, K) if trans_B else (K, N), in_dtype, rng)
    c = poison((M, N), accum_dtype)
    kernel(a, b, c)
    op_a = a.astype(np.float64).T if trans_A else a.astype(np.float64)
    op_b = b.astype(np.float64).T if trans_B else b.astype(np.float64)
    assert_close(c, op_a @ op_b, accum_dtype, scale=np.abs(op_a) @ np.abs(op_b))


GEMM_SHAPES = [(32, 32, 32), (48, 61, 100), (100, 48, 61), (1, 32, 61), (61, 1, 1)]


@pytest.mark.parametrize("M,N,K", GEMM_SHAPES)
@pytest.mark.parametrize("trans_A,trans_B", [(False, False), (False, True), (True, False),
                                             (True, True)])
def test_gemm_transposes(M, N, K, trans_A, trans_B, rng):
    check_matmul(M, N, K, rng, trans_A=trans_A, trans_B=trans_B)


@pytest.mark.parametrize("block_M,block_N,block_K", [(64, 32, 16), (16, 64, 32), (32, 16, 8)])
def test_gemm_block_sizes(block_M, block_N, block_K, rng):
    check_matmul(100, 61, 48, rng, block_M=block_M, block_N=block_N, block_K=block_K)


@pytest.mark.parametrize("num_stages", [1, 2, 3, 4])
def test_gemm_accumulates_across_pipelined_loop(num_stages, rng):
    check_matmul(48, 61, 100, rng, num_stages=num_stages)


@jit
def gemm_tile(M, N, K, clear_accum, repeat):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"),
             C0: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, K), "float32")
            B_s = T.alloc_shared((K, N), "float32")
            C_f = T.alloc_fragment((M, N), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.copy(C0, C_f)
            for r in T.serial(repeat):
                T.gemm(A_s, B_s, C_f, clear_accum=clear_accum)
            T.copy(C_f, C)

    return main


@pytest.mark.parametrize("clear_accum", [False, True])
@pytest.mark.parametrize("repeat", [1, 2])
def test_gemm_accumulates_unless_clear_accum(clear_accum, repeat, rng):
    M, N, K = 32, 48, 16
    a, b = rand((M, K), "float32", rng), rand((K, N), "float32", rng)
    c0 = rand((M, N), "float32", rng)
    c = poison((M, N), "float32")
    gemm_tile(M, N, K, clear_accum, repeat)(a, b, c0, c)
    ab = a.astype(np.float64) @ b.astype(np.float64)
    expected = ab if clear_accum else c0 + repeat * ab
    scale = np.abs(a) @ np.abs(b) * repeat + np.abs(c0)
    assert_close(c, expected, "float32", scale=scale)


@jit
def matmul_rasterized(M, N, K, panel, order, block=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
            T.use_swizzle(panel, order=order)
            A_s = T.alloc_shared((block, 32), "float16")
            B_s = T.alloc_shared((32, block), "float16")
            C_f = T.alloc_fragment((block, block), "float32")
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2):
                T.copy(A[by * block, k * 32], A_s)
                T.copy(B[k * 32, bx * block], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[by * block, bx * block])

    return main


@pytest.mark.parametrize("panel", [1, 3, 8])
@pytest.mark.parametrize("order", ["row", "col"])
def test_use_swizzle_gives_every_block_one_tile(panel, order, rng):
    # A 7 x 4 grid of blocks: panels that don't divide it leave a short last one.
    M, N, K = 130, 200, 64
    kernel = matmul_rasterized(M, N, K, panel, order)
    a, b = rand((M, K), "float16", rng), rand((K, N), "float16", rng)
    c = poison((M, N), "float32")
    kernel(a, b, c)
    op_a, op_b = a.astype(np.float64), b.astype(np.float64)
    assert_close(c, op_a @ op_b, "float32", scale=np.abs(op_a) @ np.abs(op_b))


@jit
def batched_matmul_rasterized(batch, M, N, K, panel, block=32):
    # A 3-D grid: T.use_swizzle orders x and y within each z.
    @T.prim_func
    def main(A: T.Tensor((batch, M, K), "float16"), B: T.Tensor((batch, K, N), "float16"),
             C: T.Tensor((batch, M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), batch, threads=128) as (bx, by, bz):
            T.use_swizzle(panel)
            A_s = T.alloc_shared((block, 32), "float16")
            B_s = T.alloc_shared((32, block), "float16")
            C_f = T.alloc_fragment((block, block), "float32")
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2):
                T.copy(A[bz, by * block, k * 32], A_s)
                T.copy(B[bz, k * 32, bx * block], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[bz, by * block, bx * block])

    return main


@pytest.mark.parametrize("panel", [1, 3])
def test_use_swizzle_on_a_3d_grid_keeps_each_batch_apart(panel, rng):
    batch, M, N, K = 3, 130, 100, 64
    a, b = rand((batch, M, K), "float16", rng), rand((batch, K, N), "float16", rng)
    c = poison((batch, M, N), "float32")
    batched_matmul_rasterized(batch, M, N, K, panel)(a, b, c)
    op_a, op_b = a.astype(np.float64), b.astype(np.float64)
    assert_close(c, op_a @ op_b, "float32", scale=np.abs(op_a) @ np.abs(op_b))


@jit
def rows_rasterized(n, block=64):
    # A 1-D grid is one row of blocks, already in T.use_swizzle's order.
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, block), threads=64) as bx:
            T.use_swizzle(4)
            for i in T.Parallel(block):
                if bx * block + i < n:
                    B[bx * block + i] = A[bx * block + i] * 2

    return main


def test_use_swizzle_on_a_1d_grid_keeps_the_launch_order(rng):
    a = rand((1000,), "float32", rng)
    b = poison((1000,), "float32")
    rows_rasterized(1000)(a, b)
    assert_close(b, a.astype(np.float64) * 2, "float32")


# --- T.gemm with an operand in registers (gemm_rs / gemm_sr on the GPU) ------------

@jit
def matmul_operand_in_registers(M, N, K, dtype, in_registers, trans_A, trans_B, via_shared, block_M=64,
                                block_N=64):
    # One operand of T.gemm held in a fragment (gemm_rs / gemm_sr on the GPU), either copied
    # from a shared tile or straight from global memory; the other in shared memory.
    A_shape, A_tile = ((K, M), (K, block_M)) if trans_A else ((M, K), (block_M, K))
    B_shape, B_tile = ((N, K), (block_N, K)) if trans_B else ((K, N), (K, block_N))

    @T.prim_func
    def main(A: T.Tensor(A_shape, dtype), B: T.Tensor(B_shape, dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared(A_tile, dtype)
            B_s = T.alloc_shared(B_tile, dtype)
            A_f = T.alloc_fragment(A_tile, dtype)
            B_f = T.alloc_fragment(B_tile, dtype)
            C_f = T.alloc_fragment((block_M, block_N), "float32")
            if trans_A:
                T.copy(A[0, by * block_M], A_s)
            else:
                T.copy(A[by * block_M, 0], A_s)
            if trans_B:
                T.copy(B[bx * block_N, 0], B_s)
            else:
                T.copy(B[0, bx * block_N], B_s)
            if in_registers == "A":
                if via_shared:
                    T.copy(A_s, A_f)
                elif trans_A:
                    T.copy(A[0, by * block_M], A_f)
                else:
                    T.copy(A[by * block_M, 0], A_f)
                T.gemm(A_f, B_s, C_f, transpose_A=trans_A, transpose_B=trans_B, clear_accum=True)
            else:
                if via_shared:
                    T.copy(B_s, B_f)
                elif trans_B:
                    T.copy(B[bx * block_N, 0], B_f)
                else:
                    T.copy(B[0, bx * block_N], B_f)
                T.gemm(A_s, B_f, C_f, transpose_A=trans_A, transpose_B=trans_B, clear_accum=True)
            T.copy(C_f, C[by * block_M, bx * block_N])

    return main


def check_operand_in_registers(M, N, K, dtype, in_registers, trans_A, trans_B, via_shared, rng):
    kernel = matmul_operand_in_registers(M, N, K, dtype, in_registers, trans_A, trans_B, via_shared)
    a = rand((K, M) if trans_A else (M, K), dtype, rng)
    b = rand((N, K) if trans_B else (K, N), dtype, rng)
    c = poison((M, N), "float32")
    kernel(a, b, c)
    op_a = a.astype(np.float64).T if trans_A else a.astype(np.float64)
    op_b = b.astype(np.float64).T if trans_B else b.astype(np.float64)
    assert_close(c, op_a @ op_b, "float32", scale=np.abs(op_a) @ np.abs(op_b))


@pytest.mark.parametrize("in_registers", ["A", "B"])
@pytest.mark.parametrize("trans_A,trans_B", [(False, False), (False, True), (True, False), (True, True)])
@pytest.mark.parametrize("via_shared", [True, False])
def test_gemm_with_an_operand_in_registers(in_registers, trans_A, trans_B, via_shared, rng):
    check_operand_in_registers(128, 128, 32, "bfloat16", in_registers, trans_A, trans_B, via_shared, rng)


@pytest.mark.parametrize("M,N,K", [(100, 72, 48), (128, 130, 64)])
@pytest.mark.parametrize("in_registers", ["A", "B"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gemm_with_an_operand_in_registers_odd_shapes(M, N, K, in_registers, dtype, rng):
    check_operand_in_registers(M, N, K, dtype, in_registers, False, in_registers == "A", True, rng)


@jit
def scaled_scores_times_values(M, N, D, block_M=64, block_N=64, dtype="bfloat16"):
    # Attention's register chain: S = Q K^T (Q in registers), P = S * scale converted to
    # 16 bits in S's layout, O += P V (P in registers).
    @T.prim_func
    def main(Q: T.Tensor((M, D), dtype), K: T.Tensor((N, D), dtype), V: T.Tensor((N, D), dtype),
             O: T.Tensor((M, D), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            Q_s = T.alloc_shared((block_M, D), dtype)
            K_s = T.alloc_shared((block_N, D), dtype)
            V_s = T.alloc_shared((block_N, D), dtype)
            Q_f = T.alloc_fragment((block_M, D), dtype)
            S = T.alloc_fragment((block_M, block_N), "float32")
            P = T.alloc_fragment((block_M, block_N), dtype)
            acc = T.alloc_fragment((block_M, D), "float32")
            T.copy(Q[bx * block_M, 0], Q_s)
            T.copy(Q_s, Q_f)
            T.clear(acc)
            for j in T.Pipelined(T.ceildiv(N, block_N), num_stages=2):
                T.copy(K[j * block_N, 0], K_s)
                T.copy(V[j * block_N, 0], V_s)
                T.gemm(Q_f, K_s, S, transpose_B=True, clear_accum=True)
                for i, k in T.Parallel(block_M, block_N):
                    P[i, k] = S[i, k] * 0.125
                T.gemm(P, V_s, acc)
            T.copy(acc, O[bx * block_M, 0])

    return main


@pytest.mark.parametrize("M,N,D", [(128, 192, 64), (100, 90, 32)])
def test_attention_register_chain(M, N, D, rng):
    kernel = scaled_scores_times_values(M, N, D)
    q, k, v = (rand(shape, "bfloat16", rng) for shape in [(M, D), (N, D), (N, D)])
    o = poison((M, D), "float32")
    kernel(q, k, v, o)
    p = ((q.astype(np.float64) @ k.astype(np.float64).T) * 0.125).astype(np_dtype("bfloat16")).astype(np.float64)
    v64 = v.astype(np.float64)
    # P rounds to bfloat16 in the kernel and in the reference alike; S may fall on the other
    # side of a rounding boundary, so elements of P may differ by one bfloat16 ulp.
    assert_close(o, p @ v64, "float32", scale=np.abs(p) @ np.abs(v64), rtol=RTOL["bfloat16"])


@jit
def matmul_shared_epilogue(M, N, K, block_M=64, block_N=64, block_K=32, dtype="float16"):
    # C goes out through a shared tile that takes the bytes of the pipeline's stages.
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            C_f = T.alloc_fragment((block_M, block_N), "float32")
            C_s = T.alloc_shared((block_M, block_N), dtype)
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C_s)
            T.copy(C_s, C[by * block_M, bx * block_N])

    return main


@pytest.mark.parametrize("M,N,K", [(128, 128, 128), (100, 72, 200)])
def test_gemm_epilogue_through_reused_shared_memory(M, N, K, rng):
    kernel = matmul_shared_epilogue(M, N, K)
    a, b = rand((M, K), "float16", rng), rand((K, N), "float16", rng)
    c = poison((M, N), "float16")
    kernel(a, b, c)
    op_a, op_b = a.astype(np.float64), b.astype(np.float64)
    assert_close(c, op_a @ op_b, "float16", scale=np.abs(op_a) @ np.abs(op_b))


# --- T.gemv --------------------------------------------------------------------

@jit
def gemv_tiled(N, K, block_N, block_K):
    @T.prim_func
    def main(A: T.Tensor((N, K), "float32"), x: T.Tensor((K,), "float32"),
             y0: T.Tensor((N,), "float32"), y: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), threads=128) as bx:
            A_s = T.alloc_shared((block_N, block_K), "float32")
            x_s = T.alloc_shared((block_K,), "float32")
            y_f = T.alloc_fragment((block_N,), "float32")
            T.copy(y0[bx * block_N], y_f)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[bx * block_N, k * block_K], A_s)
                T.copy(x[k * block_K], x_s)
                T.gemv(A_s, x_s, y_f, accumulate=True)
            T.copy(y_f, y[bx * block_N])

    return main


@pytest.mark.parametrize("N,K", [(32, 32), (48, 61), (100, 1), (1, 100), (61, 48)])
def test_gemv_accumulate(N, K, rng):
    a, x, y0 = rand((N, K), "float32", rng), rand(K, "float32", rng), rand(N, "float32", rng)
    y = poison(N, "float32")
    gemv_tiled(N, K, 32, 16)(a, x, y0, y)
    expected = y0 + a.astype(np.float64) @ x
    assert_close(y, expected, "float32", scale=np.abs(a) @ np.abs(x) + np.abs(y0))


@jit
def gemv_tile(N, K):
    @T.prim_func
    def main(A: T.Tensor((N, K), "float32"), x: T.Tensor((K,), "float32"),
             y0: T.Tensor((N,), "float32"), y: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_f = T.alloc_fragment((N, K), "float32")
            x_f = T.alloc_fragment((K,), "float32")
            y_f = T.alloc_fragment((N,), "float32")
            T.copy(A, A_f)
            T.copy(x, x_f)
            T.copy(y0, y_f)
            T.gemv(A_f, x_f, y_f)
            T.copy(y_f, y)

    return main


@pytest.mark.parametrize("N,K", [(32, 32), (4, 16), (61, 1), (1, 61)])
def test_gemv_writes_without_accumulate(N, K, rng):
    a, x, y0 = rand((N, K), "float32", rng), rand(K, "float32", rng), rand(N, "float32", rng)
    y = poison(N, "float32")
    gemv_tile(N, K)(a, x, y0, y)
    assert_close(y, a.astype(np.float64) @ x, "float32", scale=np.abs(a) @ np.abs(x))


# --- reductions ----------------------------------------------------------------

REDUCE_KINDS = ["sum", "max", "min", "abssum", "absmax"]


def reduced_shape(M, N, dim, keepdims=False):
    if keepdims:
        return (1, N) if dim == 0 else (M, 1)
    return (N,) if dim == 0 else (M,)


@jit
def reduce_kernel(M, N, kind, dim, clear, keepdims=False):
    out_shape = reduced_shape(M, N, dim, keepdims)

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), D0: T.Tensor(out_shape, "float32"),
             D: T.Tensor(out_shape, "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_f = T.alloc_fragment((M, N), "float32")
            D_f = T.alloc_fragment(out_shape, "float32")
            T.copy(A, A_f)
            T.copy(D0, D_f)
            if kind == "sum":
                T.reduce_sum(A_f, D_f, dim=dim, clear=clear)
            elif kind == "max":
                T.reduce_max(A_f, D_f, dim=dim, clear=clear)
            elif kind == "min":
                T.reduce_min(A_f, D_f, dim=dim, clear=clear)
            elif kind == "abssum":
                T.reduce_abssum(A_f, D_f, dim=dim, clear=clear)
            else:
                T.reduce_absmax(A_f, D_f, dim=dim, clear=clear)
            T.copy(D_f, D)

    return main


def reduce_reference(a, d0, kind, dim, clear):
    a = a.astype(np.float64)
    reduced = {
        "sum": lambda: a.sum(axis=dim),
        "max": lambda: a.max(axis=dim),
        "min": lambda: a.min(axis=dim),
        "abssum": lambda: np.abs(a).sum(axis=dim),
        "absmax": lambda: np.abs(a).max(axis=dim),
    }[kind]().reshape(d0.shape)
    if clear:
        return reduced
    combine = {"sum": np.add, "abssum": np.add, "max": np.maximum, "absmax": np.maximum,
               "min": np.minimum}[kind]
    return combine(d0.astype(np.float64), reduced)


def check_reduce(M, N, kind, dim, clear, rng, keepdims=False):
    a = rand((M, N), "float32", rng)
    out_shape = reduced_shape(M, N, dim, keepdims)
    # Old values up to 1.5 in magnitude, so that without clear some of them win
    # a max/min; non-negative for the abs kinds.
    d0 = (rand(out_shape, "float32", rng) * 1.5).astype(np.float32)
    if kind.startswith("abs"):
        d0 = np.abs(d0)
    d = poison(out_shape, "float32")
    reduce_kernel(M, N, kind, dim, clear, keepdims)(a, d0, d)
    expected = reduce_reference(a, d0, kind, dim, clear)
    what = f"reduce_{kind} dim={dim} clear={clear} keepdims={keepdims}"
    if kind.endswith("sum"):
        assert_close(d, expected, "float32", scale=np.abs(a).sum(axis=dim).reshape(out_shape) + np.abs(d0),
                     what=what)
    else:  # max/min pick one of the values: exact
        assert_close(d, expected.astype(np.float32), "float32", exact=True, what=what)


@pytest.mark.parametrize("kind", REDUCE_KINDS)
@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("clear", [True, False])
def test_reduce(kind, dim, clear, rng):
    check_reduce(48, 61, kind, dim, clear, rng)


@pytest.mark.parametrize("M,N", [(32, 32), (1, 100), (61, 1)])
@pytest.mark.parametrize("kind,dim", [("sum", 1), ("max", 0), ("min", 1)])
def test_reduce_shapes(M, N, kind, dim, rng):
    check_reduce(M, N, kind, dim, True, rng)


@pytest.mark.parametrize("kind", ["sum", "max"])
@pytest.mark.parametrize("dim", [0, 1])
def test_reduce_into_a_result_that_keeps_the_reduced_dim(kind, dim, rng):
    # TileLang's (M, 1) row statistics: on the GPU each row stays in the slot and on the threads
    # the (M,) result would give it.
    check_reduce(48, 64, kind, dim, True, rng, keepdims=True)


@jit
def reduce_1d(N, kind):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), D: T.Tensor((1,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_f = T.alloc_fragment((N,), "float32")
            D_f = T.alloc_fragment((1,), "float32")
            T.copy(A, A_f)
            if kind == "sum":
                T.reduce_sum(A_f, D_f, dim=0)
            else:
                T.reduce_max(A_f, D_f, dim=0)
            T.copy(D_f, D)

    return main


@pytest.mark.parametrize("N", [128, 1000])
@pytest.mark.parametrize("kind", ["sum", "max"])
def test_reduce_a_1d_fragment_into_one_element(N, kind, rng):
    a = rand((N,), "float32", rng)
    d = poison((1,), "float32")
    reduce_1d(N, kind)(a, d)
    if kind == "sum":
        assert_close(d, np.array([a.astype(np.float64).sum()]), "float32", scale=np.abs(a).sum(), what="sum")
    else:
        assert_close(d, np.array([a.max()]), "float32", exact=True, what="max")


@jit
def reduce_column_ranges(M, N, K, ranges, kind):
    # A gemm's accumulator reduced over column ranges, a row of Out each: on the GPU the
    # accumulator's columns are spread over slots and threads, and each range takes its own.
    which = tuple(range(len(ranges)))

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"),
             Out: T.Tensor((len(ranges), M), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared((N, K), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            row = T.alloc_fragment((M,), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.gemm(A_s, B_s, acc, transpose_B=True, clear_accum=True)
            for r in which:
                if kind == "sum":
                    T.reduce_sum(acc[:, ranges[r][0]:ranges[r][1]], row, dim=1)
                else:
                    T.reduce_max(acc[:, ranges[r][0]:ranges[r][1]], row, dim=1)
                T.copy(row, Out[r, :])

    return main


@pytest.mark.parametrize("kind", ["sum", "max"])
@pytest.mark.parametrize("M", [64, 128])
def test_reduce_of_column_ranges_reads_each_range_alone(kind, M, rng):
    # halves (the indexer's per-query head sums), a range of whole 8-column groups, and one
    # whose ends cut through them. At M = 128 a thread of the wgmma accumulator holds 4 rows:
    # the result, only stored, takes each row on one thread of the quad that summed it
    # (ir::Fragment::scattered), at 64 two rows on all four.
    ranges = ((0, 64), (64, 128), (8, 40), (5, 50))
    a, b = rand((M, 32), "float16", rng), rand((128, 32), "float16", rng)
    out = poison((len(ranges), M), "float32")
    reduce_column_ranges(M, 128, 32, ranges, kind)(a, b, out)
    full = a.astype(np.float64) @ b.astype(np.float64).T
    combine = {"sum": np.sum, "max": np.max}[kind]
    for r, (lo, hi) in enumerate(ranges):
        assert_close(out[r], combine(full[:, lo:hi], axis=1), "float32", scale=np.abs(full[:, lo:hi]).sum(axis=1),
                     what=f"reduce_{kind} of columns {lo}:{hi}")


# --- T.cumsum --------------------------------------------------------------------

@jit
def cumsum_kernel(M, N, dim, reverse, scope, in_place, dtype="float32", threads=128):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(1, threads=threads) as bx:
            if scope == "shared":
                S = T.alloc_shared((M, N), dtype)
                D = T.alloc_shared((M, N), dtype)
            elif scope == "fragment":
                S = T.alloc_fragment((M, N), dtype)
                D = T.alloc_fragment((M, N), dtype)
            else:  # a shared source into a fragment
                S = T.alloc_shared((M, N), dtype)
                D = T.alloc_fragment((M, N), dtype)
            T.copy(A, S)
            if in_place:
                T.cumsum(S, dim=dim, reverse=reverse)
                T.copy(S, B)
            else:
                T.cumsum(src=S, dst=D, dim=dim, reverse=reverse)
                T.copy(D, B)

    return main


def cumsum_reference(a, dim, reverse):
    a = a.astype(np.float64)
    if reverse:
        return np.flip(np.cumsum(np.flip(a, dim), dim), dim)
    return np.cumsum(a, dim)


def check_cumsum(M, N, dim, reverse, scope, in_place, rng, dtype="float32", threads=128):
    a = rand((M, N), dtype, rng)
    b = poison((M, N), dtype)
    cumsum_kernel(M, N, dim, reverse, scope, in_place, dtype, threads)(a, b)
    expected = cumsum_reference(a, dim, reverse)
    what = f"cumsum {M}x{N} dim={dim} reverse={reverse} {scope} in_place={in_place}"
    if dtype.startswith("int"):
        assert_close(b, expected.astype(np_dtype(dtype)), dtype, what=what)
    else:
        # Each element a sum of up to M or N terms, in the dtype.
        terms = cumsum_reference(np.abs(a), dim, reverse)
        assert_close(b, expected, dtype, scale=terms, rtol=max(M, N) * RTOL[dtype], what=what)


@pytest.mark.parametrize("scope", ["shared", "fragment"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("in_place", [False, True])
def test_cumsum(scope, dim, reverse, in_place, rng):
    check_cumsum(48, 61, dim, reverse, scope, in_place, rng)


@pytest.mark.parametrize("M,N", [(64, 64), (256, 8), (1, 100), (100, 1), (3, 5)])
@pytest.mark.parametrize("scope", ["shared", "fragment", "shared_into_fragment"])
@pytest.mark.parametrize("dim,reverse", [(0, False), (1, True)])
def test_cumsum_shapes(M, N, scope, dim, reverse, rng):
    # More lines than threads (256 x 8 along dim 0, each thread scanning several), a single
    # line (1 x 100 along dim 1), lines of one element.
    check_cumsum(M, N, dim, reverse, scope, False, rng)


@pytest.mark.parametrize("dtype", ["int32", "float16"])
@pytest.mark.parametrize("scope", ["shared", "fragment"])
def test_cumsum_dtypes(dtype, scope, rng):
    check_cumsum(32, 16, 1, False, scope, True, rng, dtype=dtype)


@jit
def cumsum_rows_of_a_slice(M, N, block):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block), threads=64) as bx:
            S = T.alloc_shared((block, N), "float32")
            T.copy(A[bx * block, 0], S)
            for r in T.serial(block):
                if r % 2 == 1:
                    T.cumsum(S[r, 0:N], dim=1, reverse=True)
                else:
                    T.cumsum(S[r, 0:N], dim=1)
            T.copy(S, B[bx * block, 0])

    return main


def test_cumsum_of_one_row_of_a_buffer_in_a_loop(rng):
    # A slice of one row (dim 1 of the 2-D buffer) at a loop index, each odd row summed from
    # its end; the last block's tile partly past M.
    M, N = 10, 24
    a = rand((M, N), "float32", rng)
    b = poison((M, N), "float32")
    cumsum_rows_of_a_slice(M, N, 4)(a, b)
    expected = np.stack([cumsum_reference(a[r], 0, (r % 4) % 2 == 1) for r in range(M)])
    assert_close(b, expected, "float32", scale=np.abs(a).sum(axis=1, keepdims=True), rtol=N * RTOL["float32"])


# --- T.atomic_add --------------------------------------------------------------

@jit
def atomic_scalar(n, bins, block):
    @T.prim_func
    def main(V: T.Tensor((n,), "int32"), X: T.Tensor((n,), "float32"),
             H: T.Tensor((bins,), "int32"), S: T.Tensor((1,), "float32")):
        with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
            for i in T.serial(block):
                if bx * block + i < n:
                    T.atomic_add(H[V[bx * block + i]], 1)
                    T.atomic_add(S[0], X[bx * block + i])

    return main


@pytest.mark.parametrize("n", [256, 1000])
def test_atomic_add_scalar_from_many_blocks(n, rng):
    bins = 7
    v = rand(n, "int32", rng, low=0, high=bins - 1)
    x = rand(n, "float32", rng)
    h0 = rand(bins, "int32", rng)
    s0 = rand(1, "float32", rng)
    h, s = h0.copy(), s0.copy()
    atomic_scalar(n, bins, 16)(v, x, h, s)
    assert_close(h, h0 + np.bincount(v, minlength=bins), "int32")
    # Float addition order varies between runs: compare against the sum's terms.
    assert_close(s, s0 + x.astype(np.float64).sum(), "float32",
                 scale=np.abs(x).sum() + np.abs(s0), rtol=n * 6e-8)


@jit
def atomic_tile(G, M, N):
    @T.prim_func
    def main(X: T.Tensor((G, M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(G, threads=128) as g:
            X_f = T.alloc_fragment((M, N), "float32")
            T.copy(X[g, 0, 0], X_f)
            T.atomic_add(C[0:M, 0:N], X_f)

    return main


@pytest.mark.parametrize("G,M,N", [(16, 8, 16), (33, 5, 7)])
def test_atomic_add_tile_from_many_blocks(G, M, N, rng):
    x = rand((G, M, N), "float32", rng)
    c0 = rand((M, N), "float32", rng)
    c = c0.copy()
    atomic_tile(G, M, N)(x, c)
    assert_close(c, c0 + x.astype(np.float64).sum(axis=0), "float32",
                 scale=np.abs(x).sum(axis=0) + np.abs(c0))


@jit
def atomic_shared_tile(G, M, N, block_M):
    """C[rows, :] += X[g, rows, :] for every g, a block_M-row tile a block staged in shared
    memory (on sm_90a a TMA reduce-add; the last tile may reach past C's rows)."""
    @T.prim_func
    def main(X: T.Tensor((G, M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(G, T.ceildiv(M, block_M), threads=128) as (g, r):
            X_s = T.alloc_shared((block_M, N), "float32")
            T.copy(X[g, r * block_M, 0], X_s)
            T.atomic_add(C[r * block_M:(r + 1) * block_M, 0:N], X_s)

    return main


@pytest.mark.parametrize("G,M,N,block_M", [(16, 128, 128, 64), (9, 100, 96, 64), (5, 24, 40, 16)])
def test_atomic_add_shared_tile_from_many_blocks(G, M, N, block_M, rng):
    x = rand((G, M, N), "float32", rng)
    c0 = rand((M, N), "float32", rng)
    c = c0.copy()
    atomic_shared_tile(G, M, N, block_M)(x, c)
    assert_close(c, c0 + x.astype(np.float64).sum(axis=0), "float32",
                 scale=np.abs(x).sum(axis=0) + np.abs(c0), rtol=G * 6e-8)


@jit
def atomic_lanes(rows, width, picks, lanes, sliced):
    """dst[idx[i], :] += src[i, :] by T.atomic_addx<lanes>, dst rows picked by idx (repeats add
    twice; an index past dst drops its adds), src staged in shared memory as sparse MLA's
    backward stages its dKV."""
    @T.prim_func
    def main(idx: T.Tensor((picks,), "int32"), src: T.Tensor((picks, width), "float32"),
             dst: T.Tensor((rows, width), "float32")):
        with T.Kernel(1, threads=64) as bx:
            s = T.alloc_shared((picks, width), "float32")
            T.copy(src, s)
            for i, d in T.Parallel(picks, width // lanes):
                if sliced:
                    T.atomic_addx4(dst[idx[i], d * 4:d * 4 + 4], s[i, d * 4:d * 4 + 4])
                elif lanes == 4:
                    T.atomic_addx4(dst[idx[i], d * 4], s[i, d * 4])
                else:
                    T.atomic_addx2(dst[idx[i], d * 2], s[i, d * 2])

    return main


@pytest.mark.parametrize("lanes,sliced", [(4, False), (2, False), (4, True)])
def test_atomic_add_lanes_scatter_rows(lanes, sliced, rng):
    rows, width, picks = 12, 16, 20
    idx = rng.integers(0, rows, picks).astype(np.int32)
    idx[3] = rows  # past dst: dropped
    src = rand((picks, width), "float32", rng)
    dst0 = rand((rows, width), "float32", rng)
    dst = dst0.copy()
    atomic_lanes(rows, width, picks, lanes, sliced)(idx, src, dst)
    expected = dst0.astype(np.float64)
    for i in range(picks):
        if idx[i] < rows:
            expected[idx[i]] += src[i]
    assert_close(dst, expected, "float32", scale=np.abs(expected) + np.abs(src).sum())


def test_atomic_add_lanes_errors():
    def kernel(body):
        @T.prim_func
        def main(A: T.Tensor((8, 8), "float32"), B: T.Tensor((8, 8), "float32")):
            with T.Kernel(1) as bx:
                if body == 0:
                    T.atomic_addx4(A[0, 0:3], B[0, 0])
                elif body == 1:
                    T.atomic_addx2(A[0, 0], B[0, 0], return_prev=True)
                else:
                    T.atomic_addx4(A[0, 0], 1.0)

        return main

    with pytest.raises(tilec.CompileError, match="argument 'dst' must be one element, or 4 of its last dim"):
        tilec.compile(kernel(0), target="cpu")
    with pytest.raises(tilec.CompileError, match=r"return_prev=True\) is not supported"):
        tilec.compile(kernel(1), target="cpu")
    with pytest.raises(tilec.CompileError, match="argument 'value' must be an element of a buffer"):
        tilec.compile(kernel(2), target="cpu")


# --- T.Parallel ----------------------------------------------------------------

@jit
def elementwise(M, N, block_M, block_N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_N), "float32")
            B_f = T.alloc_fragment((block_M, block_N), "float32")
            C_f = T.alloc_fragment((block_M, block_N), "float32")
            T.copy(A[by * block_M, bx * block_N], A_s)
            T.copy(B[by * block_M, bx * block_N], B_f)
            for i, j in T.Parallel(block_M, block_N):
                C_f[i, j] = A_s[i, j] * B_f[i, j] + A_s[i, j]
            T.copy(C_f, C[by * block_M, bx * block_N])

    return main


@pytest.mark.parametrize("M,N", SHAPES_2D)
def test_parallel_elementwise_2d(M, N, rng):
    a, b = rand((M, N), "float32", rng), rand((M, N), "float32", rng)
    c = poison((M, N), "float32")
    elementwise(M, N, 32, 16)(a, b, c)
    assert_close(c, a.astype(np.float64) * b + a, "float32")


@jit
def parallel_global_guarded(M, N, block):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
            for i, j in T.Parallel(block, block):
                row = by * block + i
                col = bx * block + j
                if row < M and col < N:
                    C[row, col] = A[row, col] * 2 + row * 1000 + col

    return main


@pytest.mark.parametrize("M,N", [(32, 32), (48, 61), (1, 100)])
def test_parallel_on_global_elements_with_guard(M, N, rng):
    a = rand((M, N), "float32", rng)
    c = poison((M, N), "float32")
    parallel_global_guarded(M, N, 32)(a, c)
    rows, cols = np.meshgrid(np.arange(M), np.arange(N), indexing="ij")
    assert_close(c, a.astype(np.float64) * 2 + rows * 1000 + cols, "float32")


@jit
def parallel_3d(D0, D1, D2):
    @T.prim_func
    def main(X: T.Tensor((D0, D1, D2), "float32"), Y: T.Tensor((D0, D1, D2), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i, j, k in T.Parallel(D0, D1, D2):
                Y[i, j, k] = X[i, j, k] + i * 100 + j * 10 + k

    return main


def test_parallel_three_dims_in_order(rng):
    x = rand((3, 5, 7), "float32", rng)
    y = poison((3, 5, 7), "float32")
    parallel_3d(3, 5, 7)(x, y)
    i, j, k = np.meshgrid(np.arange(3), np.arange(5), np.arange(7), indexing="ij")
    assert_close(y, x.astype(np.float64) + i * 100 + j * 10 + k, "float32")


@jit
def scale_and_shift(M, N, block_M, block_N, dtype):
    # Runs of consecutive elements a thread (vector accesses on the GPU), mixed with a
    # fragment and a value the loop's last var doesn't index.
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), shift: T.Tensor((M,), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            f = T.alloc_fragment((block_M, block_N), dtype)
            for i, j in T.Parallel(block_M, block_N):
                f[i, j] = A[by * block_M + i, bx * block_N + j] * 2
            for i, j in T.Parallel(block_M, block_N):
                B[by * block_M + i, bx * block_N + j] = f[i, j] + shift[by * block_M + i]

    return main


@pytest.mark.parametrize("dtype", ["float16", "float32", "int8"])
@pytest.mark.parametrize("block_M,block_N", [(16, 128), (8, 64), (32, 32)])
def test_parallel_runs_of_elements(dtype, block_M, block_N, rng):
    M, N = 64, 256
    kernel = scale_and_shift(M, N, block_M, block_N, dtype)
    a, shift = rand((M, N), dtype, rng), rand((M,), dtype, rng)
    b = poison((M, N), dtype)
    kernel(a, shift, b)
    if dtype == "int8":  # wraps around, as int8 arithmetic does
        expected = (a.astype(np.int64) * 2 + shift.astype(np.int64)[:, None]).astype(np.int8)
    else:
        expected = a.astype(np.float64) * 2 + shift.astype(np.float64)[:, None]
    assert_close(b, expected, dtype)


# --- serial / unroll / range / Pipelined ---------------------------------------

@jit
def loop_forms(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), out: T.Tensor((7,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            acc = T.alloc_local((7,), "float32")
            for i in T.serial(7):
                acc[i] = 0.0
            for i in T.serial(n):
                acc[0] += A[i]
            for i in T.serial(2, n):
                acc[1] += A[i]
            for i in T.serial(1, n, 3):
                acc[2] += A[i]
            for i in T.unroll(4):
                acc[3] += A[i] * (i + 1)
            for i in range(n):
                acc[4] += A[i] * i
            for i in range(3, n, 2):
                acc[5] += A[i]
            for i in T.serial(n):
                for j in T.serial(i):
                    acc[6] += A[j]
            for i in T.serial(7):
                out[i] = acc[i]

    return main


@pytest.mark.parametrize("n", [4, 10, 33])
def test_serial_unroll_range(n, rng):
    a = rand(n, "float32", rng)
    out = poison(7, "float32")
    loop_forms(n)(a, out)
    a64 = a.astype(np.float64)
    idx = np.arange(n)
    expected = [
        a64.sum(),
        a64[2:].sum(),
        a64[1:n:3].sum(),
        (a64[:4] * np.arange(1, 5)).sum(),
        (a64 * idx).sum(),
        a64[3:n:2].sum(),
        (a64 * (n - 1 - idx)).sum(),  # A[j] is added once for every i > j
    ]
    scale = np.abs(a64).sum() * n
    assert_close(out, np.array(expected), "float32", scale=scale)


@jit
def pipelined_chunk_sum(n, block, num_stages):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), S1: T.Tensor((block,), "float32"),
             S2: T.Tensor((block,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            chunk = T.alloc_shared((block,), "float32")
            acc1 = T.alloc_fragment((block,), "float32")
            acc2 = T.alloc_fragment((block,), "float32")
            T.clear(acc1)
            T.clear(acc2)
            for k in T.Pipelined(T.ceildiv(n, block), num_stages=num_stages):
                T.copy(A[k * block], chunk)
                for i in T.Parallel(block):
                    acc1[i] += chunk[i]
            for k in T.Pipelined(T.ceildiv(n, block)):
                T.copy(A[k * block], chunk)
                for i in T.Parallel(block):
                    acc2[i] += chunk[i] * k
            T.copy(acc1, S1)
            T.copy(acc2, S2)

    return main


@pytest.mark.parametrize("num_stages", [1, 2, 3])
@pytest.mark.parametrize("n", [64, 100])
def test_pipelined_runs_every_iteration_in_order(num_stages, n, rng):
    block = 16
    a = rand(n, "float32", rng)
    s1, s2 = poison(block, "float32"), poison(block, "float32")
    pipelined_chunk_sum(n, block, num_stages)(a, s1, s2)
    chunks = np.zeros(((n + block - 1) // block) * block)
    chunks[:n] = a
    chunks = chunks.reshape(-1, block)
    k = np.arange(chunks.shape[0])[:, None]
    assert_close(s1, chunks.sum(axis=0), "float32", scale=np.abs(chunks).sum(axis=0))
    assert_close(s2, (chunks * k).sum(axis=0), "float32",
                 scale=(np.abs(chunks) * k).sum(axis=0))


def test_on_chip_buffers_start_as_zeros_on_the_cpu(rng):
    # What a program reads before it writes is whatever the GPU left there; on the CPU it is 0 on
    # every run, never a NaN the stack held (a skipped stage row times a zero weight stays 0).
    # The even blocks leave NaNs where the next block's buffers will be (a CPU thread runs
    # consecutive blocks on the same stack); the odd ones read their buffers unwritten.
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32")):
        with T.Kernel(4, threads=128) as bx:
            S = T.alloc_shared((16, 64), "float32")
            F = T.alloc_fragment((16, 64), "float32")
            if bx % 2 == 0:
                for i, j in T.Parallel(16, 64):
                    S[i, j] = T.float32(float("nan"))
                    F[i, j] = T.float32(float("nan"))
                for i, j in T.Parallel(16, 64):
                    B[bx * 16 + i, j] = A[bx * 16 + i, j] + T.if_then_else(S[i, j] == F[i, j], 1.0, 0.0)
            else:
                for i, j in T.Parallel(16, 64):
                    B[bx * 16 + i, j] = A[bx * 16 + i, j] + S[i, j] + F[i, j]

    a = rand((64, 64), "float32", rng)
    b = poison((64, 64), "float32")
    tilec.compile(main, target="cpu")(a, b)
    assert_close(b, a, "float32", exact=True)

"""T.Persistent: a block walks the tiles of a domain in waves (TileLang's persistent loop)."""

import numpy as np
import pytest

import tilec
import tilec.language as T

from helpers import assert_close, jit, poison, rand, rng  # noqa: F401  (rng is a fixture)


@jit
def visits(m, n, blocks, group):
    """Each block counts the tiles it is given into count[tile] and records its order."""

    @T.prim_func
    def main(count: T.Tensor((m, n), "int32"), owner: T.Tensor((m, n), "int32")):
        with T.Kernel(blocks, threads=32) as b:
            for i, j in T.Persistent([m, n], blocks, b, group):
                count[i, j] = count[i, j] + 1
                owner[i, j] = b

    return main


def expected_order(m, n, blocks, group):
    """TileLang's numbering: the last dim in groups, tiles over (n / group, m, group)."""
    group = max(1, min(group, n))
    groups = -(-n // group)
    owner = np.full((m, n), -1, np.int32)
    for t in range(groups * m * group):
        g, rest = divmod(t, m * group)
        i, k = divmod(rest, group)
        j = g * group + k
        if j < n:
            owner[i, j] = t % blocks
    return owner


@pytest.mark.parametrize("m,n,blocks,group", [(5, 7, 4, 3), (4, 4, 16, 8), (3, 9, 2, 1), (1, 6, 5, 10)])
def test_every_tile_once_in_tilelangs_order(m, n, blocks, group):
    count = np.zeros((m, n), np.int32)
    owner = np.full((m, n), -7, np.int32)
    visits(m, n, blocks, group)(count, owner)
    np.testing.assert_array_equal(count, 1)
    np.testing.assert_array_equal(owner, expected_order(m, n, blocks, group))


@jit(out_idx=[-1])
def persistent_gemm(M, N, K, bM, bN, bK, blocks):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(blocks, threads=128) as b:
            A_s = T.alloc_shared((bM, bK), "float32")
            B_s = T.alloc_shared((bK, bN), "float32")
            C_l = T.alloc_fragment((bM, bN), "float32")
            for bx, by in T.Persistent([T.ceildiv(M, bM), T.ceildiv(N, bN)], blocks, b):
                T.clear(C_l)
                for k in T.Pipelined(T.ceildiv(K, bK), num_stages=2):
                    T.copy(A[bx * bM, k * bK], A_s)
                    T.copy(B[k * bK, by * bN], B_s)
                    T.gemm(A_s, B_s, C_l)
                T.copy(C_l, C[bx * bM, by * bN])

    return main


def test_a_persistent_gemm_covers_every_tile(rng):
    M, N, K = 96, 80, 64
    a, b = rand((M, K), "float32", rng), rand((K, N), "float32", rng)
    c = persistent_gemm(M, N, K, 32, 16, 32, 5)(a, b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    assert_close(c, a64 @ b64, "float32", scale=np.abs(a64) @ np.abs(b64), rtol=2e-3)


def test_persistent_names_one_variable_a_dim():
    @T.prim_func
    def main(A: T.Tensor((4, 4), "int32")):
        with T.Kernel(2) as b:
            for i in T.Persistent([4, 4], 2, b):
                A[i, 0] = 1

    with pytest.raises(tilec.CompileError, match="T.Persistent gives 2 loop variables but 1 is named"):
        tilec.compile(main, target="cpu")

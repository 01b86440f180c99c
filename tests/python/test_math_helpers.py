"""tilec.math (TileLang's tilelang.math): next_power_of_2 and cdiv, also as tilec.cdiv and
tilec.next_power_of_2, on ints and on symbolic dims."""

import pytest

import tilec
import tilec.language as T
import tilec.math


@pytest.mark.parametrize("x, expected", [(1, 1), (2, 2), (3, 4), (64, 64), (65, 128),
                                         (1000, 1024)])
def test_next_power_of_2(x, expected):
    assert tilec.math.next_power_of_2(x) == expected == tilec.next_power_of_2(x)


@pytest.mark.parametrize("a, b, expected", [(0, 4, 0), (1, 4, 1), (8, 4, 2), (9, 4, 3),
                                            (1000, 128, 8)])
def test_cdiv(a, b, expected):
    assert tilec.math.cdiv(a, b) == expected == tilec.cdiv(a, b)


def test_cdiv_of_a_symbolic_dim_is_an_expression():
    assert repr(tilec.cdiv(T.symbolic("n"), 64)) == "(((T.symbolic('n') + 64) - 1) // 64)"


@tilec.jit(target="cpu")
def eager_tile_sizes(X, dim: int, block_S: int = 8):
    # As deepseek_nsa/example_tilelang_nsa_fwd.py computes its tiles in the kernel's body.
    N = T.const("N")
    X: T.Tensor((N,), "float32")
    Y = T.empty((3,), "int32")
    block_T = min(128, tilec.math.next_power_of_2(dim))
    NK = tilec.cdiv(dim, block_T)
    with T.Kernel(1, threads=1) as bx:
        Y[0] = block_T
        Y[1] = NK + tilec.math.cdiv(N, block_S)
        Y[2] = tilec.next_power_of_2(N)
    return Y


@pytest.mark.parametrize("dim, n", [(32, 20), (100, 64), (300, 3)])
def test_the_helpers_inside_kernels(dim, n):
    import numpy as np

    y = eager_tile_sizes(np.zeros(n, np.float32), dim)
    block_T = min(128, tilec.math.next_power_of_2(dim))
    assert list(y) == [block_T, tilec.cdiv(dim, block_T) + tilec.cdiv(n, 8),
                       tilec.next_power_of_2(n)]


def test_inside_kernels_an_unknown_helper_or_a_bad_argument_is_a_located_error():
    @T.prim_func
    def bad(A: T.Tensor((4,), "int32")):
        with T.Kernel(1, threads=1) as bx:
            A[0] = tilec.math.prev_power_of_2(4)

    with pytest.raises(tilec.CompileError, match="tilec.math has no 'prev_power_of_2' usable in "
                                                 "kernels"):
        tilec.compile(bad, target="cpu")

    @T.prim_func
    def zero(A: T.Tensor((4,), "int32")):
        with T.Kernel(1, threads=1) as bx:
            A[0] = tilec.math.next_power_of_2(0)

    with pytest.raises(tilec.CompileError, match="next_power_of_2 takes an int from 1"):
        tilec.compile(zero, target="cpu")

"""Symbolic dims: one compiled kernel serves every size; sizes are read from
the tensors at call time and checked for consistency."""

import re

import numpy as np
import pytest

import tilec
import tilec.language as T

from helpers import assert_close, jit, poison, rand, rng  # noqa: F401  (rng is a fixture)


@jit
def scale_rows(block):
    n = T.symbolic("n")

    @T.prim_func
    def main(src_rows: T.Tensor((n, 8), "float32"), dst_rows: T.Tensor((n, 8), "float32")):
        with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
            for i, j in T.Parallel(block, 8):
                if bx * block + i < n:
                    dst_rows[bx * block + i, j] = src_rows[bx * block + i, j] * (j + 1) + n

    return main


def test_one_kernel_serves_every_size(rng):
    kernel = scale_rows(32)
    for n in [1, 31, 32, 33, 200, 7]:
        assert scale_rows(32) is kernel
        x = rand((n, 8), "float32", rng)
        y = poison((n, 8), "float32")
        kernel(x, y)
        assert_close(y, x.astype(np.float64) * np.arange(1, 9) + n, "float32", what=f"n={n}")


@jit(out_idx=[-1])
def dynamic_matmul(N, K, block=32):
    M = T.dynamic("m")

    @T.prim_func
    def main(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
            A_s = T.alloc_shared((block, block), "float32")
            B_s = T.alloc_shared((block, block), "float32")
            C_f = T.alloc_fragment((block, block), "float32")
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, block), num_stages=2):
                T.copy(A[by * block, k * block], A_s)
                T.copy(B[k * block, bx * block], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[by * block, bx * block])

    return main


def test_dynamic_dim_with_allocated_output(rng):
    kernel = dynamic_matmul(40, 50)
    b = rand((50, 40), "float32", rng)
    for m in [1, 32, 77]:
        a = rand((m, 50), "float32", rng)
        c = kernel(a, b)
        assert c.shape == (m, 40)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        assert_close(c, a64 @ b64, "float32", scale=np.abs(a64) @ np.abs(b64), what=f"m={m}")


@jit
def symbolic_loop_bound():
    n = T.symbolic("n")

    @T.prim_func
    def main(values: T.Tensor((n,), "float32"), total: T.Tensor((1,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            acc = T.alloc_local((1,), "float32")
            acc[0] = 0.0
            for i in T.serial(n):
                acc[0] += values[i]
            for i in range(n // 2):
                acc[0] += values[i * 2] * 10
            total[0] = acc[0]

    return main


@pytest.mark.parametrize("n", [1, 2, 9, 64])
def test_symbolic_dim_as_loop_bound(n, rng):
    x = rand(n, "float32", rng)
    t = poison(1, "float32")
    symbolic_loop_bound()(x, t)
    x64 = x.astype(np.float64)
    expected = x64.sum() + 10 * x64[0:2 * (n // 2):2].sum()
    assert_close(t, [expected], "float32", scale=11 * np.abs(x64).sum())


@jit
def two_symbols():
    rows, cols = T.symbolic("rows"), T.symbolic("cols")

    @T.prim_func
    def main(mat: T.Tensor((rows, cols), "float32"), vec: T.Tensor((cols,), "float32"),
             out: T.Tensor((rows,), "float32")):
        with T.Kernel(rows, threads=128) as r:
            acc = T.alloc_local((1,), "float32")
            acc[0] = 0.0
            for c in T.serial(cols):
                acc[0] += mat[r, c] * vec[c]
            out[r] = acc[0]

    return main


@pytest.mark.parametrize("rows,cols", [(1, 1), (5, 17), (40, 3)])
def test_two_symbols_shared_between_tensors(rows, cols, rng):
    mat, vec = rand((rows, cols), "float32", rng), rand(cols, "float32", rng)
    out = poison(rows, "float32")
    two_symbols()(mat, vec, out)
    assert_close(out, mat.astype(np.float64) @ vec, "float32", scale=np.abs(mat) @ np.abs(vec))


def test_inconsistent_symbolic_dims_raise_value_error(rng):
    kernel = two_symbols()
    mat, vec = rand((5, 17), "float32", rng), rand(16, "float32", rng)
    out = poison(5, "float32")
    with pytest.raises(ValueError) as info:
        kernel(mat, vec, out)
    msg = str(info.value)
    # The message names a tensor involved (the one found inconsistent, or the
    # one that fixed the size).
    assert re.search(r"\b(vec|mat)\b", msg), msg
    assert np.isnan(out).all(), "nothing runs when the arguments are rejected"


def test_symbolic_mismatch_between_input_and_output(rng):
    kernel = scale_rows(32)
    x = rand((10, 8), "float32", rng)
    y = poison((11, 8), "float32")
    with pytest.raises(ValueError) as info:
        kernel(x, y)
    msg = str(info.value)
    assert re.search(r"\b(dst_rows|src_rows)\b", msg), msg


def test_constant_dim_mismatch_next_to_a_symbol(rng):
    kernel = scale_rows(32)
    x = rand((10, 9), "float32", rng)  # the second dim is the constant 8
    y = poison((10, 8), "float32")
    with pytest.raises(ValueError, match="src_rows"):
        kernel(x, y)


# --- zero-size tensors: accepted whatever their strides; an empty grid launches nothing -------

def test_zero_rows_run_an_empty_grid(capfd):
    # NumPy gives a (0, 8) array strides (0, 0); no copy would have others.
    x, y = np.empty((0, 8), np.float32), np.empty((0, 8), np.float32)
    assert x.strides == (0, 0)
    capfd.readouterr()
    tilec.set_log_level("DEBUG")
    try:
        scale_rows(32)(x, y)
    finally:
        tilec.set_log_level("WARNING")
    assert "building the general" not in capfd.readouterr().err, \
        "a zero-size tensor's strides don't matter: the contiguous variant runs"


def test_zero_rows_next_to_rows_that_are_written():
    # The grid does not depend on the empty tensor: the kernel runs and writes `total`.
    total = poison(1, "float32")
    symbolic_loop_bound()(np.empty((0,), np.float32), total)
    assert total[0] == 0


def test_an_output_with_a_zero_dim_comes_back_empty(rng):
    c = dynamic_matmul(40, 50)(np.empty((0, 50), np.float32), rand((50, 40), "float32", rng))
    assert c.shape == (0, 40) and c.dtype == np.float32


# --- T.dynamic("a, b"): several dims at once (TileLang's form) ------------------------------

@jit
def two_symbols_at_once():
    rows, cols = T.dynamic("rows, cols")

    @T.prim_func
    def main(mat: T.Tensor((rows, cols), "float32"), out: T.Tensor((rows,), "float32")):
        with T.Kernel(rows, threads=32) as r:
            acc = T.alloc_local((1,), "float32")
            acc[0] = 0.0
            for c in T.serial(cols):
                acc[0] += mat[r, c]
            out[r] = acc[0]

    return main


@jit(out_idx=[-1])
def row_sums_eager(mat):
    rows, cols = T.dynamic("rows cols")  # spaces separate the names too
    mat: T.Tensor((rows, cols), "float32")
    out = T.empty((rows,), "float32")
    with T.Kernel(rows, threads=32) as r:
        acc = T.alloc_local((1,), "float32")
        acc[0] = 0.0
        for c in T.serial(cols):
            acc[0] += mat[r, c]
        out[r] = acc[0]
    return out


@pytest.mark.parametrize("rows,cols", [(1, 3), (7, 20)])
def test_dynamic_names_several_dims(rows, cols, rng):
    mat = rand((rows, cols), "float32", rng)
    out = poison(rows, "float32")
    two_symbols_at_once()(mat, out)
    expected = mat.astype(np.float64).sum(axis=1)
    assert_close(out, expected, "float32", scale=np.abs(mat).sum(axis=1))
    assert_close(row_sums_eager(mat), expected, "float32", scale=np.abs(mat).sum(axis=1))


def test_dynamic_names_are_checked():
    assert [d.name for d in T.dynamic(" a ,b ")] == ["a", "b"]
    with pytest.raises(ValueError, match=r"'2d' is not a name"):
        T.dynamic("n, 2d")
    with pytest.raises(ValueError, match=r"'' is not a name"):
        T.dynamic("n,,m")
    with pytest.raises(ValueError, match="needs the dim's name"):
        T.dynamic("")


def test_dynamic_names_are_checked_in_kernels():
    @jit
    def bad(x):
        rows, cols = T.dynamic("rows, 1cols")
        x: T.Tensor((rows, cols), "float32")
        with T.Kernel(1) as bx:
            x[0, 0] = 1.0

    with pytest.raises(tilec.CompileError, match=r"T.dynamic: '1cols' is not a name"):
        bad(np.zeros((2, 2), np.float32))


# --- a slice between two let-bound names has the extent their values give -------------------

@jit(out_idx=[-1])
def copy_head_groups(heads, group):
    @T.prim_func
    def main(Q: T.Tensor((2, heads, 16), "float32"), O: T.Tensor((2, heads, 16), "float32")):
        with T.Kernel(2, heads // group, threads=32) as (b, g):
            Q_shared = T.alloc_shared((group, 16), "float32")
            H0 = g * group + (b % 2) * 0
            H1 = H0 + group
            T.copy(Q[b, H0:H1, :], Q_shared)
            for i, j in T.Parallel(group, 16):
                Q_shared[i, j] = Q_shared[i, j] * 2
            T.copy(Q_shared, O[b, H0:H1, :])

    return main


def test_slice_between_let_bound_names(rng):
    q = rand((2, 12, 16), "float32", rng)
    assert_close(copy_head_groups(12, 4)(q), 2 * q.astype(np.float64), "float32")


# --- arithmetic on symbolic dims, computed in the factory and used in the kernel ------------

@jit(out_idx=[-1])
def pages_to_rows(page_size):
    pages = T.symbolic("pages")
    width = pages * page_size  # a value the kernel uses, as TileLang's factories do
    last = width - 1

    @T.prim_func
    def main(Table: T.Tensor((pages,), "int32"), Rows: T.Tensor((width,), "int32")):
        with T.Kernel(pages, threads=32) as p:
            for i in T.Parallel(page_size):
                Rows[p * page_size + i] = Table[p] * 1000 + T.min(p * page_size + i, last) + width // page_size

    return main


@pytest.mark.parametrize("pages", [1, 3, 10])
def test_symbolic_arithmetic_as_a_free_variable(pages, rng):
    kernel = pages_to_rows(4)
    assert pages_to_rows(4) is kernel
    table = rng.integers(0, 50, size=pages).astype(np.int32)
    rows = kernel(table)
    expected = np.repeat(table, 4) * 1000 + np.arange(pages * 4) + pages
    np.testing.assert_array_equal(rows, expected)


def test_symbolic_arithmetic_tags_its_operands():
    from tilec import capture

    n = T.symbolic("n")
    assert capture.to_core_value((n + 1) * 2) == (
        "symbolic_arith", ("*", ("symbolic_arith", ("+", ("symbolic", ("n", "int32")), ("int", 1))), ("int", 2)))
    assert capture.to_core_value(7 // n) == ("symbolic_arith", ("//", ("int", 7), ("symbolic", ("n", "int32"))))
    with pytest.raises(ZeroDivisionError, match=r"T.symbolic\('n'\) % 0"):
        n % 0


def test_symbolic_arithmetic_with_other_values_is_an_error_where_used():
    n = T.symbolic("n")
    scaled = n * 1.5  # text alone: fine in an annotation the core reads, not as a value

    @jit
    def bad(x):
        x: T.Tensor((n,), "float32")
        with T.Kernel(1) as bx:
            x[0] = scaled

    with pytest.raises(tilec.CompileError, match=r"free variable 'scaled' is a Python value of type "
                                                 r"'symbolic expression \(T.symbolic\('n'\) \* 1.5\)'"):
        bad(np.zeros((3,), np.float32))

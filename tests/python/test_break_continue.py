"""break and continue in kernels, on the backend under test. In a runtime loop (T.serial,
T.grid, T.unroll, range in a kernel, while) they set a flag of the loop's, and what they skip runs only
where the flag is clear; in a loop unrolled while compiling (over a tuple) they end the
iteration or the loop there and then, as Python does."""

import numpy as np
import pytest

import tilec.language as T

from helpers import check_diagnostic, jit, poison, rng  # noqa: F401
from test_errors import compile_error

HERE = __file__


@jit
def first_above(rows, cols):
    """Each thread scans its row for the first element above its threshold (TileLang's top-k
    selector leaves its rounds so: `if l_new_topk <= 0: break`)."""

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "int32"), limit: T.Tensor((rows,), "int32"), Y: T.Tensor((rows,), "int32")):
        with T.Kernel(1, threads=rows) as bx:
            tx = T.get_thread_binding()
            found = T.alloc_var("int32", -1)
            for j in T.serial(cols):
                if X[tx, j] > limit[tx]:
                    found = j
                    break
                found = -2 - j  # not reached once the row's element is found
            Y[tx] = found

    return main


def test_break_leaves_the_loop_where_it_runs(rng):
    rows, cols = 64, 48
    x = rng.integers(0, 1000, (rows, cols), dtype=np.int32)
    limit = rng.integers(900, 1100, (rows,), dtype=np.int32)
    y = poison((rows,), "int32")
    first_above(rows, cols)(x, limit, y)
    above = x > limit[:, None]
    expected = np.where(above.any(axis=1), above.argmax(axis=1), -2 - (cols - 1)).astype(np.int32)
    np.testing.assert_array_equal(y, expected)


@jit
def sum_of_positives(n, k):
    @T.prim_func
    def main(X: T.Tensor((n, k), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=n) as bx:
            tx = T.get_thread_binding()
            total = T.alloc_var("float32", 0.0)
            i = T.alloc_var("int32", 0)
            while i < k:
                x = X[tx, i]
                i += 1
                if x < 0:
                    continue
                if x > 0.9:
                    break
                total += x
            Y[tx] = total

    return main


def test_continue_skips_the_rest_of_an_iteration_and_break_ends_a_while_loop(rng):
    n, k = 32, 40
    x = rng.uniform(-1, 1, (n, k)).astype(np.float32)
    y = poison((n,), "float32")
    sum_of_positives(n, k)(x, y)
    expected = []
    for row in x.astype(np.float64):
        total = 0.0
        for v in row:
            if v < 0:
                continue
            if v > 0.9:
                break
            total += v
        expected.append(total)
    np.testing.assert_allclose(y, np.array(expected), rtol=1e-5, atol=1e-5)


@jit
def nested_and_unrolled(n):
    @T.prim_func
    def main(X: T.Tensor((n, 8), "int32"), Y: T.Tensor((n, 3), "int32")):
        with T.Kernel(1, threads=n) as bx:
            tx = T.get_thread_binding()
            for c, stop in enumerate((3, 5, 100)):  # unrolled while compiling
                if stop == 100:
                    break  # a compile-time break: the third column is never written here
                count = T.alloc_var("int32", 0)
                for i in T.serial(8):
                    for j in T.unroll(8):
                        if j > i:
                            break  # the inner loop's only
                        count += 1
                    if X[tx, i] >= stop:
                        break
                Y[tx, c] = count
            Y[tx, 2] = 7

    return main


def test_a_break_leaves_its_own_loop_and_a_compile_time_one_stops_unrolling(rng):
    n = 32
    x = rng.integers(0, 8, (n, 8), dtype=np.int32)
    y = poison((n, 3), "int32")
    nested_and_unrolled(n)(x, y)
    for t in range(n):
        for c, stop in enumerate((3, 5)):
            count = 0
            for i in range(8):
                count += i + 1
                if x[t, i] >= stop:
                    break
            assert y[t, c] == count, (t, c)
        assert y[t, 2] == 7


@jit
def grid_scan(n, rows, cols):
    """Each thread walks its matrix with T.grid, row by row: it sums the elements up to the
    first negative one (a break leaves the whole grid) and skips zeros (a continue goes on to the
    next element)."""

    @T.prim_func
    def main(X: T.Tensor((n, rows, cols), "int32"), Y: T.Tensor((n, 2), "int32")):
        with T.Kernel(1, threads=n) as bx:
            tx = T.get_thread_binding()
            total = T.alloc_var("int32", 0)
            seen = T.alloc_var("int32", 0)
            for i, j in T.grid(rows, cols):
                if X[tx, i, j] < 0:
                    break
                if X[tx, i, j] == 0:
                    continue
                total += X[tx, i, j] * (i + 1)
                seen += 1
            Y[tx, 0] = total
            Y[tx, 1] = seen

    return main


def test_grid_walks_its_dims_in_order_and_break_leaves_it_all(rng):
    n, rows, cols = 32, 5, 7
    x = rng.integers(-2, 40, (n, rows, cols), dtype=np.int32)
    y = poison((n, 2), "int32")
    grid_scan(n, rows, cols)(x, y)
    for t in range(n):
        total = seen = 0
        for i in range(rows):
            stop = False
            for j in range(cols):
                if x[t, i, j] < 0:
                    stop = True
                    break
                if x[t, i, j] == 0:
                    continue
                total += int(x[t, i, j]) * (i + 1)
                seen += 1
            if stop:
                break
        assert (y[t, 0], y[t, 1]) == (total, seen), t


@jit
def break_in_parallel():
    @T.prim_func
    def main(X: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(64):
                if X[i] > 0:
                    break  # ERR:parallel-break
                X[i] = 1.0

    return main


@jit
def runtime_break_in_compile_time_loop():
    @T.prim_func
    def main(X: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            tx = T.get_thread_binding()
            for c in (1, 2):
                if X[tx] > c:
                    break  # ERR:compile-time-break
                X[tx] = c

    return main


@pytest.mark.parametrize("factory,marker,words", [
    (break_in_parallel, "ERR:parallel-break", ["'break' in a T.Parallel loop", "T.serial"]),
    (runtime_break_in_compile_time_loop, "ERR:compile-time-break", ["under a runtime condition", "T.serial"]),
])
def test_misplaced_jumps_are_errors_at_their_line(factory, marker, words):
    check_diagnostic(compile_error(factory), HERE, marker, *words)

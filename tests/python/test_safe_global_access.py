"""Element accesses of global tensors that may fall outside them (passes/guard_global_accesses.h):
a load there reads 0 and a store there is skipped, as in TileLang, unless the pass config
turns it off; accesses the analysis proves inside carry no guard."""

import numpy as np
import pytest

import tilec
import tilec.language as T

from helpers import assert_close, jit, poison, rand, rng  # noqa: F401  (rng is a fixture)

ROWS, WIDTH, PICKS = 40, 16, 32


def gather_rows(pass_configs=None):
    @jit(pass_configs=pass_configs)
    def gather():
        @T.prim_func
        def main(table: T.Tensor((ROWS, WIDTH), "float32"), picks: T.Tensor((PICKS,), "int32"),
                 out: T.Tensor((PICKS, WIDTH), "float32")):
            with T.Kernel(1, threads=128) as bx:
                rows = T.alloc_shared((PICKS, WIDTH), "float32")
                for i, j in T.Parallel(PICKS, WIDTH):
                    rows[i, j] = table[picks[i], j]
                for i, j in T.Parallel(PICKS, WIDTH):
                    out[i, j] = rows[i, j]

        return main

    return gather()


def test_a_gather_past_the_table_reads_zero(rng):
    table = rand((ROWS, WIDTH), "float32", rng)
    picks = rng.integers(0, ROWS, PICKS).astype(np.int32)
    picks[::3] = ROWS        # padding past the end, as DSA's top-k indices are padded
    picks[1::7] = -5
    out = poison((PICKS, WIDTH), "float32")
    gather_rows()(table, picks, out)
    inside = (picks >= 0) & (picks < ROWS)
    expected = np.where(inside[:, None], table[np.clip(picks, 0, ROWS - 1)], 0.0)
    assert_close(out, expected, "float32")


def scatter_rows():
    @jit
    def scatter():
        @T.prim_func
        def main(values: T.Tensor((PICKS,), "float32"), picks: T.Tensor((PICKS,), "int32"),
                 out: T.Tensor((ROWS,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                for i in T.serial(PICKS):
                    out[picks[i]] = values[i]

        return main

    return scatter()


def test_a_store_past_the_tensor_is_skipped(rng):
    values = rand(PICKS, "float32", rng)
    picks = rng.permutation(ROWS)[:PICKS].astype(np.int32)
    picks[::4] = ROWS + 3
    picks[2::9] = -1
    # out is the front of a larger array: a store past it would land in the rest
    backing = poison(ROWS + 8, "float32")
    backing[ROWS:] = 7.0
    out = backing[:ROWS]
    scatter_rows()(values, picks, out)
    expected = np.full(ROWS, np.nan, np.float32)
    kept = (picks >= 0) & (picks < ROWS)
    expected[picks[kept]] = values[kept]
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(backing[ROWS:], 7.0)


def cpu_source(func, pass_configs=None):
    return tilec.compile(func, target="cpu", pass_configs=pass_configs).get_kernel_source()


def test_accesses_proven_inside_carry_no_guard():
    @T.prim_func
    def main(A: T.Tensor((64, 32), "float32"), B: T.Tensor((64, 32), "float32")):
        with T.Kernel(4, threads=128) as bx:
            for i, j in T.Parallel(16, 32):
                B[bx * 16 + i, j] = A[bx * 16 + i, j] * 2

    assert "?" not in cpu_source(main).split("B[", 1)[1].split(";", 1)[0]


def test_an_enclosing_if_proves_its_index():
    n = T.symbolic("n")

    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 64), threads=64) as bx:
            for i in T.Parallel(64):
                if bx * 64 + i < n:
                    B[bx * 64 + i] = A[bx * 64 + i] + 1

    body = cpu_source(main).split("B[", 1)[1].split(";", 1)[0]
    assert "?" not in body and "A[" in body, body


def test_an_unprovable_index_is_guarded_and_the_config_turns_it_off():
    @T.prim_func
    def main(table: T.Tensor((ROWS,), "float32"), picks: T.Tensor((8,), "int32"),
             out: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(8):
                out[i] = table[picks[i]]

    guarded = cpu_source(main)
    assert f"< INT64_C({ROWS}) ? table[" in guarded, guarded
    for configs in ({"tl.disable_safe_memory_legalize": True}, {"tilec.safe_global_access": False}):
        assert "? table[" not in cpu_source(main, configs)


def test_bounds_check_mode_reports_instead_of_guarding(rng):
    table = rand((ROWS, WIDTH), "float32", rng)
    picks = np.full(PICKS, ROWS, np.int32)
    out = poison((PICKS, WIDTH), "float32")
    kernel = tilec.compile(_gather_prim_func(), target="cpu", pass_configs={"tilec.bounds_check": True})
    with pytest.raises(RuntimeError, match=r"index \[40, 0\] is out of bounds for shape \(40, 16\) of .table."):
        kernel(table, picks, out)


def _gather_prim_func():
    @T.prim_func
    def main(table: T.Tensor((ROWS, WIDTH), "float32"), picks: T.Tensor((PICKS,), "int32"),
             out: T.Tensor((PICKS, WIDTH), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i, j in T.Parallel(PICKS, WIDTH):
                out[i, j] = table[picks[i], j]

    return main

"""Kernels are compiled for contiguous, 16-byte aligned tensors (strides known at
compile time); a call with any other tensor builds and runs the general variant.
Both give the same answers (passes/specialize_contiguous.h)."""

import numpy as np
import pytest

import tilec
import tilec.language as T

from helpers import assert_close, cpu_only, jit, poison, rand, rng  # noqa: F401  (rng is a fixture)


def tile_copy_and_scale(M, N, block_M, block_N, pass_configs=None):
    @jit(pass_configs=pass_configs)
    def kernel(M, N, block_M, block_N):
        @T.prim_func
        def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
            with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
                A_s = T.alloc_shared((block_M, block_N), "float16")
                B_f = T.alloc_fragment((block_M, block_N), "float16")
                T.copy(A[by * block_M, bx * block_N], A_s)
                for i, j in T.Parallel(block_M, block_N):
                    B_f[i, j] = A_s[i, j] * 2
                T.copy(B_f, B[by * block_M, bx * block_N])

        return main

    return kernel(M, N, block_M, block_N)


def general_builds(capfd, call):
    """How many times `call` built a general variant (from the DEBUG log)."""
    capfd.readouterr()
    tilec.set_log_level("DEBUG")
    try:
        call()
    finally:
        tilec.set_log_level("WARNING")
    return capfd.readouterr().err.count("building the general")


def test_the_compiled_source_has_the_strides_of_contiguous_tensors():
    source = tile_copy_and_scale(64, 96, 32, 32).get_kernel_source()
    assert "stride" not in source and "* 96" in source


def test_contiguous_calls_need_no_other_variant(capfd, rng):
    kernel = tile_copy_and_scale(64, 80, 32, 32)
    a = rand((64, 80), "float16", rng)
    b = poison((64, 80), "float16")
    assert general_builds(capfd, lambda: kernel(a, b)) == 0
    assert_close(b, a.astype(np.float64) * 2, "float16")


@pytest.mark.parametrize("view", ["column_range", "every_other_row", "offset_by_one_element"])
def test_other_tensors_run_the_general_variant_once_built(view, capfd, rng):
    M, N = 48, 72
    kernel = tile_copy_and_scale(M, N, 16, 32)
    if view == "column_range":
        a = rand((M, N + 8), "float16", rng)[:, 8:]
    elif view == "every_other_row":
        a = rand((2 * M, N), "float16", rng)[::2]
    else:
        a = rand((M * N + 1,), "float16", rng)[1:].reshape(M, N)
    b = poison((M, N), "float16")
    assert general_builds(capfd, lambda: kernel(a, b)) == 1
    assert_close(b, a.astype(np.float64) * 2, "float16")
    b2 = poison((M, N), "float16")
    assert general_builds(capfd, lambda: kernel(a, b2)) == 0, "the general variant is built once"
    assert_close(b2, a.astype(np.float64) * 2, "float16")
    c = rand((M, N), "float16", rng)  # contiguous again: the specialized variant
    assert general_builds(capfd, lambda: kernel(c, b)) == 0
    assert_close(b, c.astype(np.float64) * 2, "float16")


def test_pass_config_compiles_only_the_general_variant(capfd, rng):
    kernel = tile_copy_and_scale(32, 64, 32, 32, pass_configs={"tilec.specialize_contiguous": False})
    assert "stride0" in kernel.get_kernel_source()
    a = rand((32, 128), "float16", rng)[:, :64]
    b = poison((32, 64), "float16")
    assert general_builds(capfd, lambda: kernel(a, b)) == 0
    assert_close(b, a.astype(np.float64) * 2, "float16")


@jit
def scale_symbolic_rows(block):
    n = T.symbolic("n")

    @T.prim_func
    def main(A: T.Tensor((n, 24), "float32"), B: T.Tensor((n, 24), "float32")):
        with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
            for i, j in T.Parallel(block, 24):
                if bx * block + i < n:
                    B[bx * block + i, j] = A[bx * block + i, j] * 3 + n

    return main


@pytest.mark.parametrize("view", ["every_other_row", "column_range",
                                  pytest.param("reversed_rows", marks=cpu_only("torch tensors have no negative strides")),
                                  "broadcast_row"])
def test_strided_views_with_a_symbolic_dim(view, rng):
    # The general variant is lowered again from the source: its symbolic dims are its own.
    kernel = scale_symbolic_rows(16)
    for n in [5, 40]:
        if view == "every_other_row":
            a = rand((2 * n, 24), "float32", rng)[::2]
        elif view == "column_range":
            a = rand((n, 32), "float32", rng)[:, 8:]
        elif view == "reversed_rows":
            a = rand((n, 24), "float32", rng)[::-1]
        else:
            a = np.broadcast_to(rand(24, "float32", rng), (n, 24))
        b = poison((n, 24), "float32")
        kernel(a, b)
        assert_close(b, a.astype(np.float64) * 3 + n, "float32", what=f"n={n}")

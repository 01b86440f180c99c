"""A function of several `with T.Kernel(...)` blocks runs them one after another, each
seeing what the ones before it wrote to global memory: TileLang's split-K and flash-decoding
kernels write partial results, then combine them. On a GPU each block is a launch of its own
(passes/split_launches.h), on the backend under test here."""

import numpy as np
import pytest

import tilec
import tilec.language as T

from helpers import assert_close, check_diagnostic, jit, poison, rand, rng, skip_without_nvrtc  # noqa: F401
from test_errors import compile_error

ARCH = "sm_90a"


@T.macro
def split_then_combine_blocks(A, partial, Out, n, splits, block):
    # Pass 1: each (row block, split) sums its slice of the columns into partial.
    # Pass 2: each row block adds its splits up, in a grid and with threads of its own.
    with T.Kernel(T.ceildiv(n, block), splits, threads=128) as (bx, s):
        tile = T.alloc_fragment((block, block), "float32")
        sums = T.alloc_fragment((block,), "float32")
        T.copy(A[bx * block, s * block], tile)
        T.reduce_sum(tile, sums, dim=1)
        T.copy(sums, partial[s, bx * block])
    with T.Kernel(T.ceildiv(n, 32), threads=32) as bx:
        total = T.alloc_fragment((32,), "float32")
        T.clear(total)
        for k in T.serial(splits):
            for i in T.Parallel(32):
                total[i] += partial[k, bx * 32 + i]
        T.copy(total, Out[bx * 32])


@jit
def split_then_combine(n, splits, block=64):
    @T.prim_func
    def main(A: T.Tensor((n, splits * block), "float32"), Partial: T.Tensor((splits, n), "float32"),
             Out: T.Tensor((n,), "float32")):
        split_then_combine_blocks(A, Partial, Out, n, splits, block)

    return main


@pytest.mark.parametrize("n,splits", [(128, 3), (256, 1)])
def test_each_block_sees_what_the_blocks_before_it_wrote(n, splits, rng):
    a = rand((n, splits * 64), "float32", rng)
    partial = poison((splits, n), "float32")
    out = poison((n,), "float32")
    split_then_combine(n, splits)(a, partial, out)
    a64 = a.astype(np.float64)
    assert_close(partial, a64.reshape(n, splits, 64).sum(axis=2).T, "float32", scale=np.sqrt(64))
    assert_close(out, a64.sum(axis=1), "float32", scale=np.sqrt(splits * 64))


def test_on_a_gpu_each_block_is_a_launch_of_its_own():
    with skip_without_nvrtc():
        kernel = tilec.compile(split_then_combine.__wrapped__(128, 3), target="cuda", arch=ARCH)
    source = kernel.get_kernel_source()
    assert source.startswith("// launch 1 of 2\n") and "\n// launch 2 of 2\n" in source
    assert source.count("__global__") == 2
    first, second = source.split("\n// launch 2 of 2\n")
    assert "__launch_bounds__(128)" in first and "__launch_bounds__(32)" in second


@jit(out_idx=[-1])
def through_a_scratch_tensor(n, splits, block=64):
    # TileLang's flash decoding: the partial sums go to a T.alloc_global tensor, which each
    # call allocates; the caller passes only A and gets Out.
    @T.prim_func
    def main(A: T.Tensor((n, splits * block), "float32"), Out: T.Tensor((n,), "float32")):
        partial = T.alloc_global((splits, n), "float32")
        split_then_combine_blocks(A, partial, Out, n, splits, block)

    return main


def test_alloc_global_gives_each_call_a_scratch_tensor(rng):
    kernel = through_a_scratch_tensor(128, 3)
    assert [p.name for p in kernel.params] == ["A", "Out"]
    assert "workspaces=[2]" in kernel.get_tile_ir()
    for _ in range(2):
        a = rand((128, 3 * 64), "float32", rng)
        assert_close(kernel(a), a.astype(np.float64).sum(axis=1), "float32", scale=np.sqrt(3 * 64))


def test_alloc_global_belongs_before_the_kernel_blocks():
    @jit
    def inside(n):
        @T.prim_func
        def main(A: T.Tensor((n,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                scratch = T.alloc_global((n,), "float32")  # ERR:alloc-global-inside
                for i in T.Parallel(n):
                    scratch[i] = A[i]

        return main

    check_diagnostic(compile_error(inside, 32), __file__, "ERR:alloc-global-inside", "before them")

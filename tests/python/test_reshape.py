"""T.reshape and T.view: a buffer's elements, read in row-major order in another shape, without
a copy, on the backend under test.

Views of tensors, shared tiles, locals and fragments, read and written through; reductions
over a view's dims (the lightning indexer's per-head sum); and the errors of views that can't
be.
"""

import re

import numpy as np
import pytest

import tilec
import tilec.language as T

from helpers import assert_close, build_for_cuda, check_diagnostic, jit, poison, rand, rng, skip_without_nvrtc  # noqa: F401
from test_ops_dsa import FP8_SUM_RTOL


@jit
def tensor_read_as_rows(N, M):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N // M, M), "float32")):
        with T.Kernel(1, threads=128) as _:
            rows = T.reshape(A, [N // M, M])
            T.copy(rows, B)

    return main


def test_a_tensor_reshaped_is_its_elements_in_rows(rng):
    a = rand((1024,), "float32", rng)
    b = poison((32, 32), "float32")
    tensor_read_as_rows(1024, 32)(a, b)
    assert_close(b, a.reshape(32, 32), "float32", exact=True)


@jit
def shared_both_ways(N, M, dtype):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N // M, M), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=128) as _:
            flat = T.alloc_shared((N,), dtype)
            for i in T.Parallel(N):
                flat[i] = A[i]
            rows = T.reshape(flat, [N // M, M])
            T.copy(rows, B)
            # Written through the view, read through the buffer: the barrier between is the
            # buffer's.
            for r, c in T.Parallel(N // M, M):
                rows[r, c] = rows[r, c] * 2
            T.copy(flat, C)

    return main


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_a_shared_tile_reshaped_reads_and_writes_its_bytes(dtype, rng):
    a = rand((2048,), dtype, rng)
    b, c = poison((32, 64), dtype), poison((2048,), dtype)
    shared_both_ways(2048, 64, dtype)(a, b, c)
    assert_close(b, a.reshape(32, 64), dtype, exact=True)
    assert_close(c, a * 2, dtype, exact=True)


@jit
def fragment_flattened(N, M, dtype):
    @T.prim_func
    def main(A: T.Tensor((N // M, M), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=32) as _:
            A_shared = T.alloc_shared((N // M, M), dtype)
            A_local = T.alloc_fragment((N // M, M), dtype)
            B_shared = T.alloc_shared((N,), dtype)
            T.copy(A, A_shared)
            T.copy(A_shared, A_local)
            flat = T.reshape(A_local, [N])
            T.copy(flat, B_shared)
            T.copy(B_shared, B)

    return main


@pytest.mark.parametrize("N,M,dtype", [(1024, 32, "float32"), (2048, 64, "float16")])
def test_a_fragment_flattened_keeps_its_elements(N, M, dtype, rng):
    a = rand((N // M, M), dtype, rng)
    b = poison((N,), dtype)
    fragment_flattened(N, M, dtype)(a, b)
    assert_close(b, a.reshape(N), dtype, exact=True)


@jit
def max_of_groups(N, M, threads):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N // M,), "float32")):
        with T.Kernel(1, threads=threads) as _:
            A_local = T.alloc_fragment((N,), "float32")
            B_local = T.alloc_fragment((N // M,), "float32")
            T.copy(A, A_local)
            groups = T.reshape(A_local, [N // M, M])
            T.reduce_max(groups, B_local, dim=1)
            T.copy(B_local, B)

    return main


@pytest.mark.parametrize("N,M,threads", [(1024, 32, 32), (2048, 64, 128), (384, 128, 128)])
def test_a_reduction_over_a_fragment_reshaped_into_groups(N, M, threads, rng):
    a = rand((N,), "float32", rng)
    b = poison((N // M,), "float32")
    max_of_groups(N, M, threads)(a, b)
    assert_close(b, a.reshape(N // M, M).max(axis=1), "float32", exact=True)


@jit
def weighted_heads(keys, queries, heads, dim, dtype):
    """The lightning indexer's sum over heads, as TileLang's fp8_lighting_indexer writes it: one
    gemm of every query's heads, read as [keys, queries, heads]."""

    @T.prim_func
    def main(Q: T.Tensor((queries * heads, dim), dtype), K: T.Tensor((keys, dim), dtype),
             W: T.Tensor((queries, heads), "float32"), Out: T.Tensor((keys, queries), "float32")):
        with T.Kernel(1, threads=128) as _:
            Q_shared = T.alloc_shared((queries * heads, dim), dtype)
            K_shared = T.alloc_shared((keys, dim), dtype)
            scores = T.alloc_fragment((keys, queries * heads), "float32")
            by_head = T.reshape(scores, (keys, queries, heads))
            weights = T.alloc_fragment((queries, heads), "float32")
            logits = T.alloc_fragment((keys, queries), "float32")
            T.copy(Q, Q_shared)
            T.copy(K, K_shared)
            T.copy(W, weights)
            T.gemm(K_shared, Q_shared, scores, transpose_B=True, clear_accum=True)
            for k, q, h in T.Parallel(keys, queries, heads):
                by_head[k, q, h] = T.max(by_head[k, q, h], 0) * weights[q, h]
            T.reduce_sum(by_head, logits, dim=-1, clear=True)
            T.copy(logits, Out)

    return main


INDEXER_SHAPES = [(64, 2, 64, 64, "float16"), (64, 4, 32, 128, "float8_e4m3")]


@pytest.mark.parametrize("keys,queries,heads,dim,dtype", INDEXER_SHAPES)
def test_the_indexer_sums_heads_through_a_reshaped_score_fragment(keys, queries, heads, dim, dtype, rng):
    q = rand((queries * heads, dim), dtype, rng)
    k = rand((keys, dim), dtype, rng)
    w = rand((queries, heads), "float32", rng)
    out = poison((keys, queries), "float32")
    weighted_heads(keys, queries, heads, dim, dtype)(q, k, w, out)
    scores = k.astype(np.float64) @ q.astype(np.float64).T
    expected = (np.maximum(scores.reshape(keys, queries, heads), 0) * w).sum(axis=-1)
    if dtype == "float16":
        assert_close(out, expected, "float32", rtol=1e-4)
    else:  # Hopper's fp8 wgmma accumulates in about 14 bits: the error against the terms' magnitudes
        terms = ((np.abs(k.astype(np.float64)) @ np.abs(q.astype(np.float64)).T).reshape(keys, queries, heads)
                 * np.abs(w)).sum(axis=-1)
        worst = np.max(np.abs(out - expected) / terms)
        assert worst <= FP8_SUM_RTOL, f"error {worst:.2e} of the terms' magnitude"


@pytest.mark.parametrize("keys,queries,heads,dim,dtype", INDEXER_SHAPES)
def test_the_indexer_with_a_reshaped_fragment_builds_for_sm90a(keys, queries, heads, dim, dtype):
    source = build_for_cuda(weighted_heads, "sm_90a", keys=keys, queries=queries, heads=heads, dim=dim, dtype=dtype)
    assert "wgmma_gemm_ss" in source


@jit
def local_reshaped(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), B: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=32) as _:
            vals = T.alloc_local((N,), "int32")
            grid = T.reshape(vals, (N // 4, 4))
            for i in T.serial(N):
                vals[i] = A[i]
            for r in T.serial(N // 4):
                for c in T.serial(4):
                    grid[r, c] = grid[r, c] + r
            for i in T.serial(N):
                B[i] = vals[i]

    return main


def test_a_local_array_reshaped_writes_its_own_elements(rng):
    a = rand((16,), "int32", rng)
    b = poison((16,), "int32")
    local_reshaped(16)(a, b)
    assert_close(b, a + np.repeat(np.arange(4, dtype=np.int32), 4), "int32", exact=True)


@jit
def view_of_a_view(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as _:
            s = T.alloc_shared((N,), "float32")
            T.copy(A, s)
            square = T.reshape(s, (N // 8, 8))
            cube = T.view(square, (N // 16, 4, 4))
            for i, j, k in T.Parallel(N // 16, 4, 4):
                cube[i, j, k] = cube[i, j, k] + j
            T.copy(s, B)

    return main


def test_a_view_of_a_view_views_the_buffer(rng):
    a = rand((64,), "float32", rng)
    b = poison((64,), "float32")
    view_of_a_view(64)(a, b)
    expected = a + np.tile(np.repeat(np.arange(4, dtype=np.float32), 4), 4)
    assert_close(b, expected, "float32", exact=True)


@jit
def gemm_through_a_view(M, N, K, block_K, stages):
    """A pipelined GEMM whose A tile is filled as a flat buffer and multiplied through a view of
    it: neither is staged (a stage of one would leave the other reading the first), and the view
    binds the tile's layout, so the gemm reads it row-major wherever it runs."""

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as _:
            A_flat = T.alloc_shared((M * block_K,), "float16")
            A_tile = T.reshape(A_flat, (M, block_K))
            B_shared = T.alloc_shared((block_K, N), "float16")
            C_local = T.alloc_fragment((M, N), "float32")
            T.clear(C_local)
            for k in T.Pipelined(K // block_K, num_stages=stages):
                for i, j in T.Parallel(M, block_K):
                    A_flat[i * block_K + j] = A[i, k * block_K + j]
                T.copy(B[k * block_K, 0], B_shared)
                T.gemm(A_tile, B_shared, C_local)
            T.copy(C_local, C)

    return main


@pytest.mark.parametrize("stages", [1, 2])
def test_a_pipelined_gemm_reads_its_tile_through_a_view(stages, rng):
    M, N, K = 64, 64, 128
    a, b = rand((M, K), "float16", rng), rand((K, N), "float16", rng)
    c = poison((M, N), "float32")
    gemm_through_a_view(M, N, K, 32, stages)(a, b, c)
    assert_close(c, a.astype(np.float64) @ b.astype(np.float64), "float32", rtol=1e-3)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_a_view_of_an_empty_tile_builds_and_runs(arch, rng):
    # M = 0: the view, its buffer and the gemm have no rows (a fuzz finding: the layout they
    # share, and the panels or the mma swizzle the gemm would read, threw on no rows)
    assert "__global__" in build_for_cuda(gemm_through_a_view, arch, M=0, N=64, K=128, block_K=32, stages=2)
    b = rand((128, 64), "float16", rng)
    gemm_through_a_view(0, 64, 128, 32, 2)(np.zeros((0, 128), np.float16), b, np.zeros((0, 64), np.float32))


def test_a_viewed_tile_is_neither_staged_nor_laid_out_for_wgmma():
    source = build_for_cuda(gemm_through_a_view, "sm_90a", M=64, N=64, K=128, block_K=32, stages=2)
    declarations = [line for line in source.splitlines() if "A_flat =" in line or "A_tile =" in line]
    # one tile of 64 x 32 halves (4 KiB), and the view at its place
    assert any("reinterpret_cast" in line for line in declarations) and any("A_flat;" in line for line in declarations)
    # B's copies go to the next iteration's stage; A's to the one tile, in its own iteration
    writes = [line for line in source.splitlines() if "cp_async_16((tilec_cuda::shared_address(" in line]
    assert any("shared_address(B_shared) + static_cast<uint32_t>(((k_stage_iter + 1) & 1) *" in line
               for line in writes), writes
    assert all("k_stage_iter + 1" not in line and "k_stage_iter * 32" in line
               for line in writes if "shared_address(A_flat)" in line), writes
    assert "wgmma_gemm_ss" not in source


@T.prim_func
def gemm_of_a_view_compiled_once(A: T.Tensor((64, 32), "float16"), B: T.Tensor((32, 64), "float16"),
                                 C: T.Tensor((64, 64), "float32")):
    # compiled by one test alone: its warning is given once a process
    with T.Kernel(1, threads=128) as _:
        A_flat = T.alloc_shared((64 * 32,), "float16")
        A_tile = T.reshape(A_flat, (64, 32))
        B_shared = T.alloc_shared((32, 64), "float16")
        C_local = T.alloc_fragment((64, 64), "float32")
        for i, j in T.Parallel(64, 32):
            A_flat[i * 32 + j] = A[i, j]
        T.copy(B, B_shared)
        T.gemm(A_tile, B_shared, C_local, clear_accum=True)
        T.copy(C_local, C)


def test_a_gemm_of_a_view_off_the_tensor_cores_says_the_view_is_why(capfd):
    with skip_without_nvrtc():
        tilec.compile(gemm_of_a_view_compiled_once, target="cuda", arch="sm_80")
    err = capfd.readouterr().err
    assert re.search(r"T.gemm runs on CUDA cores \(scalar FMA\), not tensor cores: not mma.sync: A \('A_tile'\) has "
                     r"the layout its views share \(T.reshape at .*test_reshape.py:\d+:\d+\)", err), err


@jit
def reshape_to_another_count():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1) as _:
            s = T.alloc_shared((64,), "float32")
            v = T.reshape(s, (8, 9))  # ERR:another-count
            T.copy(A, v[0, 0:8])

    return main


@jit
def view_as_another_dtype():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1) as _:
            s = T.alloc_shared((64,), "float32")
            v = T.view(s, (8, 8), dtype="float16")  # ERR:another-dtype
            T.copy(A, s)

    return main


@jit
def layout_of_a_view():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1) as _:
            s = T.alloc_shared((64,), "float32")
            v = T.reshape(s, (8, 8))
            T.annotate_layout({v: T.Layout((8, 8), lambda i, j: j * 8 + i)})  # ERR:layout-of-view
            T.copy(A, s)

    return main


@jit
def reshape_of_a_number():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1) as _:
            v = T.reshape(A[0], (8, 8))  # ERR:not-a-buffer
            T.copy(v, A)

    return main


@jit
def reshape_of_a_symbolic_tensor():
    N = T.dynamic("N")

    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1) as _:
            v = T.reshape(A, (8, 8))  # ERR:symbolic-buffer
            v[0, 0] = 1.0

    return main


@jit
def reshape_to_a_symbolic_shape():
    N = T.dynamic("N")

    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1) as _:
            s = T.alloc_shared((64,), "float32")
            v = T.reshape(s, (N, 8))  # ERR:symbolic-shape
            v[0, 0] = A[0]

    return main


@jit
def reshape_outside_a_kernel():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        v = T.reshape(A, (8, 8))  # ERR:outside-kernel
        with T.Kernel(1) as _:
            v[0, 0] = 1.0

    return main


@pytest.mark.parametrize("factory,marker,words", [
    (reshape_to_another_count, "ERR:another-count", ["T.reshape", "64 elements, not 72"]),
    (view_as_another_dtype, "ERR:another-dtype", ["T.view", "float32", "not float16"]),
    (layout_of_a_view, "ERR:layout-of-view", ["is a view of", "lay out 's'"]),
    (reshape_of_a_number, "ERR:not-a-buffer", ["T.reshape", "not"]),
    (reshape_of_a_symbolic_tensor, "ERR:symbolic-buffer", ["T.reshape", "'A'", "needs its shape constant"]),
    (reshape_to_a_symbolic_shape, "ERR:symbolic-shape", ["T.reshape", "compile-time integers", "64 elements"]),
    (reshape_outside_a_kernel, "ERR:outside-kernel", ["T.reshape", "inside a T.Kernel block"]),
])
def test_a_view_that_cannot_be_is_an_error_at_its_line(factory, marker, words):
    with pytest.raises(tilec.CompileError) as info:
        factory()
    check_diagnostic(str(info.value), __file__, marker, *words)

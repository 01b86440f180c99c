"""Thread block clusters (T.Kernel's cluster_dims, TileLang's T.ClusterKernel; CUDA sm_90): a
cluster's blocks are launched together, each knows its rank in the cluster
(T.block_rank_in_cluster) and T.cluster_sync waits for all of them. Other targets refuse
clusters; a grid that is not a multiple of the cluster is an error before anything runs."""

import re

import pytest

import tilec
import tilec.language as T
from tilec import CompileError
from test_hopper import emit, hopper_or_skip, matmul


@T.macro
def swap_with_peer(X, Y, Ranks, bx):
    # Y[b] = X[b's peer] * 2 + b's rank: each block writes its row of Y, then reads the row its
    # peer wrote before the cluster's barrier.
    tx = T.get_thread_binding()
    rank = T.block_rank_in_cluster()
    Y[bx, tx] = X[bx, tx] * 2
    if tx == 0:
        Ranks[bx] = rank
    T.cluster_sync()
    v = Y[bx - rank + 1 - rank, tx]
    T.cluster_sync()
    Y[bx, tx] = v + rank


def swap_in_pairs(n, threads=128, cluster_kernel=False):
    @T.prim_func
    def main(X: T.Tensor((n, threads), "float32"), Y: T.Tensor((n, threads), "float32"),
             Ranks: T.Tensor((n,), "int32")):
        with T.Kernel(n, threads=threads, cluster_dims=2) as bx:
            swap_with_peer(X, Y, Ranks, bx)

    @T.prim_func
    def tilelang_spelling(X: T.Tensor((n, threads), "float32"), Y: T.Tensor((n, threads), "float32"),
                          Ranks: T.Tensor((n,), "int32")):
        with T.ClusterKernel(n, threads=threads, cluster_dims=(2, 1, 1)) as bx:
            swap_with_peer(X, Y, Ranks, bx)

    return tilelang_spelling if cluster_kernel else main


def symbolic_pairs():
    n = T.symbolic("n")

    @T.prim_func
    def main(X: T.Tensor((n, 128), "float32")):
        with T.Kernel(n, threads=128, cluster_dims=2) as bx:
            tx = T.get_thread_binding()
            X[bx, tx] = X[bx, tx] + T.block_rank_in_cluster()

    return main


@pytest.mark.parametrize("cluster_kernel", [False, True])
def test_the_kernel_carries_its_cluster_and_builds_for_sm90a(cluster_kernel):
    func = swap_in_pairs(8, cluster_kernel=cluster_kernel)
    assert "# clusters of 2 x 1 x 1 blocks" in emit(func, "ir")
    source = emit(func, "source")
    assert re.search(r"__launch_bounds__\(128\) __cluster_dims__\(2, 1, 1\) tilec_\w+\(", source)
    assert '#include "cuda/cluster.h"' in source and source.count("tilec_cuda::cluster_sync();") == 2
    ptx = emit(func, "ptx")
    assert "%cluster_ctarank" in ptx and "barrier.cluster.arrive.release" in ptx and "barrier.cluster.wait" in ptx


def test_a_cluster_kernel_is_not_made_persistent():
    # A persistent kernel's one wave of blocks would take its tiles a block at a time.
    assert "# persistent" in emit(matmul(512, 512, 512), "ir")
    ir = emit(matmul(512, 512, 512, cluster_dims=(2, 1)), "ir")
    assert "# clusters of 2 x 1 x 1 blocks" in ir and "# persistent" not in ir


def cluster_sync_under(condition):
    @T.prim_func
    def main(X: T.Tensor((8, 128), "float32"), n: T.int32):
        with T.Kernel(8, threads=128, cluster_dims=2) as bx:
            tx = T.get_thread_binding()
            rank = T.block_rank_in_cluster()
            half = bx // 2
            if condition == "rank":
                if rank == 0:
                    T.cluster_sync()
            elif condition == "block":
                if half % 2 == 0:
                    T.cluster_sync()
            elif condition == "thread loop":
                for i in T.serial(tx % 3):
                    T.cluster_sync()
            elif condition == "argument":
                if n > 4:
                    T.cluster_sync()
            else:
                for i in T.serial(3):
                    T.cluster_sync()
            X[bx, tx] = rank

    return main


@pytest.mark.parametrize("condition", ["rank", "block", "thread loop"])
def test_a_cluster_barrier_some_blocks_or_threads_skip_is_refused(condition):
    # On a GPU the blocks that reach it would wait forever for those that don't.
    with pytest.raises(CompileError, match=r"test_clusters\.py:\d+:\d+: error: T.cluster_sync under a condition or "
                                           r"in a loop that differs from thread to thread or from block to block"):
        emit(cluster_sync_under(condition), "source")


@pytest.mark.parametrize("condition", ["argument", "constant loop"])
def test_a_cluster_barrier_every_thread_reaches_alike_is_taken(condition):
    assert "tilec_cuda::cluster_sync();" in emit(cluster_sync_under(condition), "source")


def test_targets_without_clusters_refuse_them():
    with pytest.raises(CompileError, match=r"test_clusters\.py:\d+:\d+: error: thread block clusters \(cluster_dims\) "
                                           r"need CUDA sm_90 or later; target cpu has none"):
        tilec.compile(swap_in_pairs(8), target="cpu")
    with pytest.raises(CompileError, match=r"target cuda sm_80 has none"):
        tilec.compile(swap_in_pairs(8), target="cuda", arch="sm_80")
    with pytest.raises(CompileError, match=r"target hip gfx90a has none"):
        tilec.compile(swap_in_pairs(8), target="hip", arch="gfx90a")


def test_a_grid_barrier_takes_no_clusters():
    @T.prim_func
    def main(X: T.Tensor((8,), "float32")):
        with T.Kernel(8, threads=32, cluster_dims=2) as bx:
            T.sync_grid()

    with pytest.raises(CompileError, match=r"T.sync_grid launches the kernel cooperatively, which takes no thread "
                                           r"block clusters"):
        tilec.compile(main, target="cuda", arch="sm_90a")


@pytest.mark.gpu
@pytest.mark.parametrize("n", [2, 8, 264])
@pytest.mark.parametrize("cluster_kernel", [False, True])
def test_each_block_sees_what_its_peer_wrote_before_the_cluster_barrier(n, cluster_kernel):
    torch = hopper_or_skip()
    x = torch.randn(n, 128, device="cuda")
    y = torch.full((n, 128), float("nan"), device="cuda")
    ranks = torch.full((n,), -1, dtype=torch.int32, device="cuda")
    tilec.compile(swap_in_pairs(n, cluster_kernel=cluster_kernel))(x, y, ranks)
    torch.cuda.synchronize()
    expected_ranks = torch.arange(n, device="cuda", dtype=torch.int32) % 2
    assert torch.equal(ranks, expected_ranks)
    peers = torch.arange(n, device="cuda") ^ 1
    assert torch.equal(y, x[peers] * 2 + expected_ranks[:, None].float())


@pytest.mark.gpu
def test_a_grid_that_is_not_a_multiple_of_the_cluster_is_refused_before_it_runs():
    torch = hopper_or_skip()
    kernel = tilec.compile(symbolic_pairs())
    x = torch.zeros(7, 128, device="cuda")
    with pytest.raises(ValueError, match=r"its grid is 7 x 1 x 1 blocks for these arguments, not a multiple of its "
                                         r"thread block clusters \(cluster_dims 2 x 1 x 1\)"):
        kernel(x)
    torch.cuda.synchronize()
    assert torch.count_nonzero(x) == 0
    kernel(torch.zeros(6, 128, device="cuda"))

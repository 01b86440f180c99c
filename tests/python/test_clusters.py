"""Thread block clusters (T.Kernel's cluster_dims, TileLang's T.ClusterKernel; CUDA sm_90): a
cluster's blocks are launched together, each knows its rank in the cluster
(T.block_rank_in_cluster) and T.cluster_sync waits for all of them. A block writes into a peer's
shared memory (T.copy_cluster) and arrives at a peer's barriers (T.alloc_cluster_barrier,
T.mbarrier_arrive(bar, cta_id=...)). Other targets refuse clusters; a grid that is not a
multiple of the cluster is an error before anything runs. The CPU runs a cluster's blocks as
fibers of one thread (device/cpu/clusters.h): the tests below run there, and on an sm_90 GPU
with TILEC_TEST_TARGET=cuda; a cluster whose blocks all wait on each other is an error there, not
a hang."""

import re

import numpy as np
import pytest

import tilec
import tilec.language as T
from tilec import CompileError
from helpers import prim_func_from_text, rand, rng  # noqa: F401  (rng is a fixture)
from test_hopper import emit, hopper_or_skip, matmul
from test_ops import ON_GPU, on_target, to_numpy


def run(func, *arrays):
    """func compiled for the test target and run on the arrays (numpy; torch CUDA tensors on a
    GPU, which must be sm_90); returns them as numpy arrays after the run."""
    if ON_GPU:
        hopper_or_skip()
    args = on_target(*arrays)
    tilec.compile(func)(*args)
    return [to_numpy(arg, str(array.dtype)) for arg, array in zip(args, arrays)]


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
                                           r"need CUDA sm_90 or later, or the CPU; target cuda sm_80 has none"):
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


@pytest.mark.parametrize("n", [2, 8, 264])
@pytest.mark.parametrize("cluster_kernel", [False, True])
def test_each_block_sees_what_its_peer_wrote_before_the_cluster_barrier(n, cluster_kernel, rng):
    x = rand((n, 128), "float32", rng)
    y = np.full((n, 128), np.nan, np.float32)
    ranks = np.full((n,), -1, np.int32)
    _, y, ranks = run(swap_in_pairs(n, cluster_kernel=cluster_kernel), x, y, ranks)
    expected_ranks = np.arange(n, dtype=np.int32) % 2
    np.testing.assert_array_equal(ranks, expected_ranks)
    np.testing.assert_array_equal(y, x[np.arange(n) ^ 1] * 2 + expected_ranks[:, None].astype(np.float32))


def test_a_grid_that_is_not_a_multiple_of_the_cluster_is_refused_before_it_runs():
    # a ValueError before the launch on a GPU; on the CPU the kernel's first check, raised alike
    if ON_GPU:
        hopper_or_skip()
    kernel = tilec.compile(symbolic_pairs())
    (x,) = on_target(np.zeros((7, 128), np.float32))
    with pytest.raises(ValueError,
                       match=r"its grid is 7 x 1 x 1 blocks for these arguments, not a multiple of its "
                             r"thread block clusters \(cluster_dims 2 x 1 x 1\)"):
        kernel(x)
    assert not to_numpy(x, "float32").any()
    (y,) = on_target(np.zeros((6, 128), np.float32))
    kernel(y)
    np.testing.assert_array_equal(to_numpy(y, "float32"), np.tile(np.arange(6) % 2, (128, 1)).T)


# --- a peer block's shared memory and barriers ---------------------------------------------

def copy_to_peer(n, signal):
    """TileLang's SM-to-SM copy (testing/python/cuda/test_tma_dsmem.py): block 0 of the one
    cluster copies A into block 1's shared memory, which writes it to B. With signal="barrier"
    block 1 waits on its cluster barrier, which the copy arrives at; with "cluster_sync" both
    blocks pass a cluster barrier."""

    @T.prim_func
    def kernel(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.ClusterKernel(2, threads=128, cluster_dims=(2, 1, 1)) as pid:
            s_src = T.alloc_shared((n,), "float32")
            s_dst = T.alloc_shared((n,), "float32")
            s_barrier = T.alloc_cluster_barrier([1])
            T.fill(s_src, 0.0)
            T.fill(s_dst, 0.0)
            T.cluster_sync()
            if pid == 0:
                for i in T.Parallel(n):
                    s_src[i] = A[i]
                if signal == "barrier":
                    T.copy_cluster(s_src, s_dst, dst_block=1, remote_barrier=s_barrier[0])
                else:
                    T.copy_cluster(s_src, s_dst, dst_block=1)
            if signal == "cluster_sync":
                T.cluster_sync()
            if pid == 1:
                if signal == "barrier":
                    T.mbarrier_wait_parity(s_barrier[0], 0)
                for i in T.Parallel(n):
                    B[i] = s_dst[i]

    return kernel


def copy_slice_to_peer(m, n_full, n_tile, first=0):
    """A 2-D slice whose rows are not contiguous in the buffer, each block sending its rows to
    the other: B[r] = A[r's peer] over columns first.. first + n_tile of [m, n_full] buffers (an
    odd `first` leaves no 16-byte runs: an element a store)."""

    @T.prim_func
    def kernel(A: T.Tensor((4, m, n_tile), "float16"), B: T.Tensor((4, m, n_tile), "float16")):
        with T.Kernel(4, threads=128, cluster_dims=2) as bx:
            s_src = T.alloc_shared((m, n_full), "float16")
            s_dst = T.alloc_shared((m, n_full), "float16")
            arrived = T.alloc_cluster_barrier(1)
            rank = T.block_rank_in_cluster()
            T.copy(A[bx, :, :], s_src[0:m, first:first + n_tile])
            T.copy_cluster(s_src[0:m, first:first + n_tile], s_dst[0:m, first:first + n_tile], dst_block=1 - rank,
                           remote_barrier=arrived)
            T.mbarrier_wait_parity(arrived, 0)
            T.copy(s_dst[0:m, first:first + n_tile], B[bx, :, :])

    return kernel


def passing_round(steps, n=256):
    """Each step, a block adds its rank + 1 to the running row and hands it to its peer's shared
    memory, which may take it only once the peer has read the last one: a barrier each way, as a
    pipeline's full and empty barriers are. Out[b] = X[b] + what the steps added."""

    @T.prim_func
    def kernel(X: T.Tensor((8, n), "float32"), Out: T.Tensor((8, n), "float32")):
        with T.Kernel(8, threads=128, cluster_dims=2) as bx:
            row = T.alloc_shared((n,), "float32")
            mine = T.alloc_shared((n,), "float32")
            full = T.alloc_cluster_barrier(1)
            empty = T.alloc_cluster_barrier(128)
            rank = T.block_rank_in_cluster()
            peer = 1 - rank
            T.copy(X[bx, :], mine)
            T.copy_cluster(mine, row, dst_block=peer, remote_barrier=full)
            for step in T.serial(steps):
                T.mbarrier_wait_parity(full, step % 2)
                for i in T.Parallel(n):
                    mine[i] = row[i] + rank + 1
                # The peer's row is free again once every thread here has read it.
                T.mbarrier_arrive(empty, cta_id=peer)
                T.mbarrier_wait_parity(empty, step % 2)
                T.copy_cluster(mine, row, dst_block=peer, remote_barrier=full)
            T.mbarrier_wait_parity(full, steps % 2)
            T.copy(row, Out[bx, :])

    return kernel


def shared_operand_gemm(m, n, k):
    """Each block of a cluster of 2 loads half of the rows of the B tile the two share and sends
    them to the other, whose gemm reads the whole tile from its own shared memory (laid out as
    wgmma wants: the copy follows both buffers' swizzle). C = A @ B."""

    @T.prim_func
    def kernel(A: T.Tensor((2 * m, k), "bfloat16"), B: T.Tensor((k, n), "bfloat16"),
               C: T.Tensor((2 * m, n), "float32")):
        with T.Kernel(2, threads=128, cluster_dims=2) as bx:
            A_s = T.alloc_shared((m, k), "bfloat16")
            B_s = T.alloc_shared((k, n), "bfloat16")
            acc = T.alloc_fragment((m, n), "float32")
            arrived = T.alloc_cluster_barrier(1)
            rank = T.block_rank_in_cluster()
            half = k // 2
            T.copy(A[bx * m:(bx + 1) * m, :], A_s)
            T.copy(B[rank * half:(rank + 1) * half, :], B_s[rank * half:(rank + 1) * half, :])
            T.copy_cluster(B_s[rank * half:(rank + 1) * half, :], B_s[rank * half:(rank + 1) * half, :],
                           dst_block=1 - rank, remote_barrier=arrived)
            T.mbarrier_wait_parity(arrived, 0)
            T.gemm(A_s, B_s, acc, clear_accum=True)
            T.copy(acc, C[bx * m:(bx + 1) * m, :])

    return kernel


def multicast_ring(steps, slots, cluster, mask, m=64, n=32):
    """TileLang's TMA multicast (T.tma_copy(cluster_mask=...)) through a ring of stages: each
    step's tile of A lands in a stage of every block of the cluster whose rank `mask` sets,
    loaded once by the lowest of them (the issuer); a block outside the mask loads its own.
    Out[b, step] = the tile + b's rank, read from the stage. The issuer reloads a stage only once
    every masked block has arrived at its copy of `free` (done with the stage's last tile), so
    each stage is reused under both parities."""
    masked = bin(mask).count("1")
    issuer = (mask & -mask).bit_length() - 1

    @T.prim_func
    def kernel(A: T.Tensor((steps, m, n), "float32"), Out: T.Tensor((2 * cluster, steps, m, n), "float32")):
        with T.Kernel(2 * cluster, threads=128, cluster_dims=cluster) as bx:
            stages = T.alloc_shared((slots, m, n), "float32")
            full = T.alloc_cluster_barrier([128] * slots)
            free = T.alloc_cluster_barrier([masked] * slots)
            rank = T.block_rank_in_cluster()
            tx = T.get_thread_binding()
            for step in T.serial(steps):
                slot = step % slots
                if (rank == issuer) & (step >= slots):
                    T.mbarrier_wait_parity(free[slot], (step // slots - 1) % 2)
                T.tma_copy(A[step, :, :], stages[slot, :, :], barrier=full[slot], cluster_mask=mask)
                T.barrier_arrive(full[slot])
                T.barrier_wait(full[slot], (step // slots) % 2)
                for i, j in T.Parallel(m, n):
                    Out[bx, step, i, j] = stages[slot, i, j] + rank
                T.sync_threads()
                if (tx == 0) & (((mask >> rank) & 1) == 1):
                    T.mbarrier_arrive(free[slot], cta_id=issuer)

    return kernel


def test_a_multicast_load_builds_for_sm90a():
    # The lowest rank of the mask multicasts; in a cluster of 4 with ranks 1 and 2 masked, ranks
    # 0 and 3 load their own tiles. Each masked block adds the tile's bytes to its own barrier.
    ir = emit(multicast_ring(3, 2, 4, 0b0110), "ir")
    assert re.search(r"T.device.mbarrier_expect_tx\(T.address_of\(full\[slot\]\), 8192\)\)\n"
                     r"\s+if T.device.block_rank_in_cluster\(\) == 1:\n"
                     r"\s+T.evaluate\(T.device.tma_load_multicast\(T.tensor_map\(0\), T.address_of\(stages\[slot, 0, 0\]\), "
                     r"T.address_of\(full\[slot\]\), T.uint16\(6\), 0, 0, step\)\)\n"
                     r"\s+elif 6 >> T.device.block_rank_in_cluster\(\) & 1 == 0:\n"
                     r"\s+T.evaluate\(T.device.tma_load\(T.tensor_map\(0\), T.address_of\(stages\[slot, 0, 0\]\), "
                     r"T.address_of\(full\[slot\]\), 0, 0, step\)\)", ir), ir
    cuda = emit(multicast_ring(3, 2, 2, 0b11), "source")
    assert re.search(r"tma_load_multicast\(.*, static_cast<uint16_t>\(3\), 0, 0, step\);", cuda), cuda
    ptx = emit(multicast_ring(3, 2, 2, 0b11), "ptx")
    assert "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster" in ptx


@pytest.mark.parametrize("cluster,mask", [(2, 0b11), (4, 0b0110), (4, 0b1111)])
@pytest.mark.parametrize("steps,slots", [(1, 2), (7, 2), (8, 3)])
def test_a_multicast_fills_the_stages_of_every_masked_block(cluster, mask, steps, slots, rng):
    a = rand((steps, 64, 32), "float32", rng)
    _, out = run(multicast_ring(steps, slots, cluster, mask), a, np.full((2 * cluster, steps, 64, 32), np.nan,
                                                                         np.float32))
    ranks = np.arange(2 * cluster) % cluster
    np.testing.assert_array_equal(out, a[None] + ranks[:, None, None, None].astype(np.float32))


def multicast_copy_demo(grid_x=2, grid_y=2, mask=0b0011, eviction_policy=None):
    """TileLang's synchronous multicast, T.copy_cluster(global, shared, cluster_mask=m), in
    clusters of 4 along x: the masked blocks all get the tile at the lowest masked rank's
    coordinates, the others their own. B[tile of block (bx, by)] = the tile its shared memory
    holds."""

    @T.prim_func
    def kernel(A: T.Tensor((grid_y * 32, grid_x * 4 * 32), "float32"),
               B: T.Tensor((grid_y * 32, grid_x * 4 * 32), "float32")):
        with T.Kernel(grid_x * 4, grid_y, threads=128, cluster_dims=(4, 1, 1)) as (bx, by):
            tile = T.alloc_shared((32, 32), "float32")
            T.copy_cluster(A[by * 32:(by + 1) * 32, bx * 32:(bx + 1) * 32], tile, cluster_mask=mask,
                           eviction_policy=eviction_policy)
            T.copy(tile, B[by * 32:(by + 1) * 32, bx * 32:(bx + 1) * 32])

    return kernel


@pytest.mark.parametrize("mask", [0b0011, 0b0110, 0b1111])
def test_a_multicast_copy_gives_the_masked_blocks_the_lowest_ones_tile(mask, rng):
    a = rand((64, 256), "float32", rng)
    _, b = run(multicast_copy_demo(mask=mask), a, np.full_like(a, np.nan))
    issuer = (mask & -mask).bit_length() - 1
    expected = a.copy()
    for bx in range(8):
        rank, first = bx % 4, bx - bx % 4
        if (mask >> rank) & 1:
            source = (first + issuer) * 32
            expected[:, bx * 32:(bx + 1) * 32] = a[:, source:source + 32]
    np.testing.assert_array_equal(b, expected)


def test_a_multicast_copy_builds_for_sm90a():
    # a cluster barrier of its own, the lowest masked rank's multicast, every thread's wait
    ir = emit(multicast_copy_demo(), "ir")
    assert "T.device.tma_load_multicast(" in ir and "T.uint16(3)" in ir
    assert "mbarrier_wait_parity_in_cluster" in ir
    ptx = emit(multicast_copy_demo(), "ptx")
    assert ".multicast::cluster" in ptx
    # with an eviction_policy, its load's cache hint
    assert "T.device.tma_load_multicast<2>(" in emit(multicast_copy_demo(eviction_policy="evict_last"), "ir")
    assert ".multicast::cluster.L2::cache_hint" in emit(multicast_copy_demo(eviction_policy="evict_last"), "ptx")


def test_a_copy_to_a_peer_block_builds_for_sm90a():
    # With a barrier: st.async, whose bytes the peer's barrier counts, after one arrival that
    # adds them to what its phase waits for.
    ir = emit(copy_to_peer(128, "barrier"), "ir")
    assert "T.device.copy_to_block_async<16>(T.address_of(s_dst[" in ir
    assert "mbarrier_arrive_expect_tx_in_block(T.address_of(s_barrier[0]), 1, 512)" in ir
    ptx = emit(copy_to_peer(128, "barrier"), "ptx")
    for instruction in ["mapa.shared::cluster.u32", "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32",
                        "mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64",
                        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64", "fence.mbarrier_init.release.cluster"]:
        assert instruction in ptx, instruction
    # Without: plain stores, fenced, that a cluster barrier publishes.
    ptx = emit(copy_to_peer(128, "cluster_sync"), "ptx")
    assert "st.shared::cluster.v4.b32" in ptx and "fence.proxy.async.shared::cluster" in ptx
    for kernel in [copy_to_peer(128, "cluster_sync"), copy_slice_to_peer(64, 96, 64), passing_round(3),
                   shared_operand_gemm(64, 64, 64)]:
        assert "mapa" in emit(kernel, "ptx")


def test_the_cluster_barriers_are_initialized_before_any_block_goes_on_and_no_block_leaves_early():
    # A peer's arrival at a barrier not yet initialized would be lost; the cluster waits instead.
    source = emit(passing_round(2), "source")
    init = source.index("tilec_cuda::fence_mbarrier_init();")
    assert source.index("tilec_cuda::cluster_sync();", init) < source.index("copy_to_block", init)
    # A block that left would take its shared memory with it while its peer may still write there.
    body = source[source.index("__global__"):].rstrip()
    assert body.endswith("tilec_cuda::cluster_sync();\n}")
    assert not emit(swap_in_pairs(8), "source").rstrip().endswith("tilec_cuda::cluster_sync();\n}")


@pytest.mark.parametrize("first,n_tile,store", [(0, 40, "copy_to_block_async<16>"), (4, 36, "copy_to_block_async<8>"),
                                                 (2, 34, "copy_to_block_async<4>"), (1, 40, "store_to_block")])
def test_a_copy_to_a_peer_moves_16_bytes_at_a_time_where_the_rows_allow(first, n_tile, store):
    ir = emit(copy_slice_to_peer(64, 96, n_tile, first), "ir")
    assert f"T.device.{store}(T.address_of(s_dst[" in ir
    assert all(other not in ir for other in ["copy_to_block_async<16>", "copy_to_block_async<8>",
                                             "copy_to_block_async<4>", "store_to_block"] if other != store)
    # 2-byte elements, one a store: plain stores, then the threads' barrier and an arrival that
    # releases them at cluster scope
    assert ("mbarrier_arrive_release_in_block" in ir) == (store == "store_to_block")


def test_a_user_layout_after_a_vector_copy_to_a_peer_is_an_error(tmp_path):
    src = ("import tilec.language as T\n"
           "@T.prim_func\n"
           "def main(A: T.Tensor((64,), 'float16')):\n"
           "    with T.Kernel(2, threads=64, cluster_dims=2) as bx:\n"
           "        s = T.alloc_shared((64,), 'float16')\n"
           "        t = T.alloc_shared((64,), 'float16')\n"
           "        T.copy_cluster(s, t, dst_block=1 - T.block_rank_in_cluster())\n"
           "        T.annotate_layout({t: T.Layout((64,), lambda i: 63 - i)})\n")
    with pytest.raises(CompileError, match=r"kernel.py:8:28: error: T.annotate_layout: T.copy_cluster at "
                                           r".*kernel.py:7:9 moved 't' 16 bytes at a time"):
        emit(prim_func_from_text(src, tmp_path), "ir")
    # annotated first, the copy goes an element at a time
    lines = src.splitlines()
    lines[6], lines[7] = lines[7], lines[6]
    assert "store_to_block" in emit(prim_func_from_text("\n".join(lines) + "\n", tmp_path), "ir")


def cluster_kernel_source(body, folder, cluster_dims=2):
    src = (
        "import tilec.language as T\n"
        "@T.prim_func\n"
        "def main(A: T.Tensor((4, 64), 'float32')):\n"
        f"    with T.Kernel(4, threads=64, cluster_dims={cluster_dims}) as bx:\n"
        "        s = T.alloc_shared((64,), 'float32')\n"
        "        t = T.alloc_shared((64,), 'float32')\n"
        "        frag = T.alloc_fragment((64,), 'float32')\n"
        "        own = T.alloc_barrier(1)\n"
        "        shared_bar = T.alloc_cluster_barrier([1, 2])\n"
        + "".join("        " + line + "\n" for line in body))
    return prim_func_from_text(src, folder)


@pytest.mark.parametrize("body,message", [
    (["T.copy_cluster(s, t)"], "T.copy_cluster: name the block of the cluster whose shared memory 'dst' is in"),
    (["T.copy_cluster(s, t, dst_block=2)"], "dst_block is the rank of a block of the cluster, from 0 to 1, not 2"),
    (["T.copy_cluster(s, t, dst_block=-1)"], "dst_block is the rank of a block of the cluster, from 0 to 1, not -1"),
    (["T.copy_cluster(A[0, :], t, dst_block=1)"], "T.copy_cluster copies shared memory to shared memory; 'A' is global"),
    (["T.copy_cluster(s, frag, dst_block=1)"], "'frag' is fragment"),
    (["T.copy_cluster(s, t[0:32], dst_block=1)"],
     "T.copy_cluster: shapes differ: source 's' is (64,) but destination 't' is (32,)"),
    (["T.copy_cluster(A[0, :], t, dst_block=1, cluster_mask=3)"],
     "T.copy_cluster: cluster_mask (a TMA multicast from global memory) takes no dst_block=..."),
    (["T.copy_cluster(s, t, cluster_mask=3)"],
     "T.copy_cluster(..., cluster_mask=...) multicasts a global tile into shared memory, not shared 's' to shared 't'"),
    (["for i in T.serial(2):", "    T.copy_cluster(A[i, :], t, cluster_mask=3)"],
     "T.copy_cluster(..., cluster_mask=...) goes in the T.Kernel block itself, outside loops"),
    (["T.copy_cluster(A[0, :], t, cluster_mask=4)"],
     "T.copy_cluster: cluster_mask sets the bits of ranks of the cluster's 2 blocks (from 1 to 3), not 4"),
    (["T.tma_copy(A[0, :], s, barrier=shared_bar[0], cluster_mask=4)"],
     "T.tma_copy: cluster_mask sets the bits of ranks of the cluster's 2 blocks (from 1 to 3), not 4"),
    (["T.tma_copy(A[0, :], s, barrier=shared_bar[0], cluster_mask=0)"],
     "T.tma_copy: cluster_mask sets the bits of ranks of the cluster's 2 blocks (from 1 to 3), not 0"),
    (["T.tma_copy(A[0, :], s, barrier=own, cluster_mask=3)"],
     "T.tma_copy(cluster_mask=...): a peer block arrives only at barriers from T.alloc_cluster_barrier(...)"),
    (["T.tma_copy(s, A[0, :], cluster_mask=3)"], "T.tma_copy: a store to global memory is not multicast"),
    (["T.copy_cluster(s, t, dst_block=1, remote_barrier=own)"],
     "a peer block arrives only at barriers from T.alloc_cluster_barrier(...)"),
    (["T.copy_cluster(s, t, dst_block=1, remote_barrier=shared_bar)"], "'shared_bar' holds several barriers"),
    (["T.copy_cluster(s, t, dst_block=1, remote_barrier=s[0])"], "'remote_barrier' is a barrier from T.alloc_barrier"),
    (["T.mbarrier_arrive(own, cta_id=1)"], "a peer block arrives only at barriers from T.alloc_cluster_barrier(...)"),
    (["T.mbarrier_arrive(shared_bar[1], cta_id=bx * 0 + 5)"],
     "cta_id is the rank of a block of the cluster, from 0 to 1, not 5"),
    (["for i in T.Parallel(64):", "    T.copy_cluster(s, t, dst_block=1)"], "it goes outside T.Parallel loops"),
    (["if bx == 0:", "    b = T.alloc_cluster_barrier(1)"], "T.alloc_cluster_barrier goes in the T.Kernel block itself"),
    (["big = T.alloc_shared((1 << 18,), 'float32')",
      "T.copy_cluster(big, big, dst_block=1, remote_barrier=shared_bar[0])"],
     "T.copy_cluster: a barrier's phase counts at most 1048575 bytes, and this tile is 1048576; copy it in parts"),
])
def test_cluster_copy_and_barrier_mistakes_are_errors_at_their_line(body, message, tmp_path):
    with pytest.raises(CompileError, match=r"kernel.py:\d+:\d+: error: .*" + re.escape(message)):
        emit(cluster_kernel_source(body, tmp_path), "ir")


def test_a_copy_to_a_peer_needs_clusters(tmp_path):
    src = ("import tilec.language as T\n"
           "@T.prim_func\n"
           "def main(A: T.Tensor((64,), 'float32')):\n"
           "    with T.Kernel(4, threads=64) as bx:\n"
           "        s = T.alloc_shared((64,), 'float32')\n"
           "        T.copy_cluster(s, s, dst_block=0)\n")
    with pytest.raises(CompileError, match=r"kernel.py:6:9: error: T.copy_cluster copies between the shared memory "
                                           r"of a thread block cluster's blocks; this T.Kernel has no cluster_dims"):
        emit(prim_func_from_text(src, tmp_path), "ir")


@pytest.mark.parametrize("signal", ["barrier", "cluster_sync"])
@pytest.mark.parametrize("n", [128, 1000])
def test_a_block_copies_its_shared_memory_into_its_peers(signal, n, rng):
    a = rand((n,), "float32", rng)
    _, b = run(copy_to_peer(n, signal), a, np.full((n,), np.nan, np.float32))
    np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("first,n_tile", [(0, 40), (4, 36), (2, 34), (1, 40)])
def test_a_slice_of_rows_goes_to_the_peer_and_signals_its_barrier(first, n_tile, rng):
    a = rand((4, 64, n_tile), "float16", rng)
    _, b = run(copy_slice_to_peer(64, 96, n_tile, first), a, np.full_like(a, np.nan))
    np.testing.assert_array_equal(b, a[np.arange(4) ^ 1])


@pytest.mark.parametrize("steps", [1, 2, 7])
def test_blocks_hand_rows_back_and_forth_through_each_others_barriers(steps, rng):
    x = rand((8, 256), "float32", rng)
    _, out = run(passing_round(steps), x, np.full_like(x, np.nan))
    peers = np.arange(8) ^ 1
    ranks = (np.arange(8) % 2).astype(np.float32)
    rows = x[peers]  # what each block's row holds at each step's wait
    for _ in range(steps):
        rows = (rows + ranks[:, None] + 1)[peers]
    np.testing.assert_allclose(out, rows, rtol=0, atol=1e-5)


def test_a_gemm_reads_a_tile_half_of_which_its_peer_sent(rng):
    a, b = rand((128, 64), "bfloat16", rng), rand((64, 64), "bfloat16", rng)
    _, _, c = run(shared_operand_gemm(64, 64, 64), a, b, np.full((128, 64), np.nan, np.float32))
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


def waits_on_each_other(how):
    """A cluster whose blocks can't all go on: with how="barrier", block 1 waits on a cluster
    barrier no block arrives at; with "both", each block waits for an arrival the other makes only
    after its own wait."""

    @T.prim_func
    def kernel(A: T.Tensor((2, 64), "float32")):
        with T.Kernel(2, threads=64, cluster_dims=2) as bx:
            bar = T.alloc_cluster_barrier(1)
            rank = T.block_rank_in_cluster()
            if how == "barrier":
                if rank == 1:
                    T.mbarrier_wait_parity(bar, 0)
            else:
                T.mbarrier_wait_parity(bar, 0)
                tx = T.get_thread_binding()
                if tx == 0:
                    T.mbarrier_arrive(bar, cta_id=1 - rank)
            for i in T.Parallel(64):
                A[bx, i] = rank

    return kernel


@pytest.mark.parametrize("how", ["barrier", "both"])
def test_on_the_cpu_a_cluster_whose_blocks_all_wait_is_an_error_not_a_hang(how):
    with pytest.raises(RuntimeError, match=r"the kernel would hang: in cluster \(0\), every block left waits for what "
                                           r"no block can do:\n  block rank [01]: waits at .*test_clusters\.py:\d+: "
                                           r"T.mbarrier_wait_parity\(bar, 0\) for the phase of parity 0"):
        tilec.compile(waits_on_each_other(how), target="cpu")(np.zeros((2, 64), np.float32))


def copy_to_rank(n):
    @T.prim_func
    def kernel(A: T.Tensor((2, n), "float32"), rank: T.int32):
        with T.Kernel(2, threads=64, cluster_dims=2) as bx:
            s = T.alloc_shared((n,), "float32")
            T.copy(A[bx, :], s)
            T.copy_cluster(s, s, dst_block=rank)
            T.cluster_sync()
            T.copy(s, A[bx, :])

    return kernel


def test_on_the_cpu_a_peer_rank_outside_the_cluster_is_an_error(rng):
    # On a GPU a rank past the cluster's blocks would reach another SM's memory, or fault.
    a = rand((2, 64), "float32", rng)
    kernel = tilec.compile(copy_to_rank(64), target="cpu")
    with pytest.raises(RuntimeError, match=r"T.copy_cluster: block rank 2 is not in the cluster of 2 blocks"):
        kernel(a.copy(), 2)
    out = a.copy()
    kernel(out, 0)  # both blocks copy into block 0's shared memory; block 1's keeps its own row
    np.testing.assert_array_equal(out[1], a[1])

"""Warp specialization written by hand, as TileLang's warp_specialize examples write it: T.ws
groups whose tile ops are spread over their own threads, mbarriers (T.alloc_barrier,
T.barrier_wait / T.mbarrier_wait_parity, T.barrier_arrive / T.mbarrier_arrive,
T.mbarrier_expect_tx), T.tma_copy and T.set_max_nreg. The code is checked through NVRTC for
sm_90a without a GPU; the products on an H100/H200, and on the CPU, whose groups are fibers that
take turns at their barrier waits."""

import re

import numpy as np
import pytest

import tilec
import tilec.language as T
from tilec import CompileError
from tilec import _core, capture
from tilec.jit import core_pass_configs
from helpers import prim_func_from_text, rand, rng, skip_without_nvrtc  # noqa: F401  (rng is a fixture)
from test_hopper import check, emit, hopper_or_skip


def emit_for(func, arch, stage="source"):
    source, filename, first_line, name, bindings = capture.function_value(func.func, func.source, func.scope)
    return _core.emit(source, filename, first_line, name, bindings, "cuda", arch, core_pass_configs(None), stage)


def producer_consumer(M, N, K, bM=128, bN=128, bK=64, stages=2, dtype="float16", producer=1, regs=False):
    """TileLang's barrierpipe example: warp group `producer` fills `stages` stage tiles by TMA,
    the other multiplies them; full and empty barriers per stage."""
    consumer = 1 - producer

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=256) as (bx, by):
            A_s = T.alloc_shared((stages, bM, bK), dtype)
            B_s = T.alloc_shared((stages, bK, bN), dtype)
            C_l = T.alloc_fragment((bM, bN), "float32")
            bars = T.alloc_barrier([128] * (2 * stages))
            with T.ws(consumer):
                T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bK), num_stages=stages):
                with T.ws(producer):
                    if regs:
                        T.set_max_nreg(40, 0)
                    T.mbarrier_wait_parity(bars[k % stages + stages], (k // stages) % 2 ^ 1)
                    T.tma_copy(A[by * bM:(by + 1) * bM, k * bK:(k + 1) * bK], A_s[k % stages, :, :],
                               barrier=bars[k % stages])
                    T.tma_copy(B[k * bK, bx * bN], B_s[k % stages, :, :], barrier=bars[k % stages])
                    T.mbarrier_arrive(bars[k % stages])
                with T.ws(consumer):
                    T.barrier_wait(bars[k % stages], (k // stages) % 2)
                    T.gemm(A_s[k % stages, :, :], B_s[k % stages, :, :], C_l)
                    T.barrier_arrive(bars[k % stages + stages])
            with T.ws(consumer):
                T.copy(C_l, C[by * bM, bx * bN])

    return main


def split_columns(M, N, K, bM=128, bN=128, bK=64, dtype="float16"):
    """TileLang's copy_gemm_0_1 example: both warp groups read the block's A tile; each loads
    and multiplies its own half of B. No mbarriers: tilec places the barriers."""
    half = bN // 2

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=256) as (bx, by):
            A_s = T.alloc_shared((bM, bK), dtype)
            B0 = T.alloc_shared((bK, half), dtype)
            B1 = T.alloc_shared((bK, half), dtype)
            C0 = T.alloc_fragment((bM, half), "float32")
            C1 = T.alloc_fragment((bM, half), "float32")
            with T.ws(1):
                T.clear(C1)
            with T.ws(0):
                T.clear(C0)
            for k in T.Pipelined(T.ceildiv(K, bK), num_stages=0):
                T.copy(A[by * bM, k * bK], A_s)
                with T.ws(1):
                    T.copy(B[k * bK, bx * bN], B1)
                    T.gemm(A_s, B1, C1)
                with T.ws(0):
                    T.copy(B[k * bK, bx * bN + half], B0)
                    T.gemm(A_s, B0, C0)
            with T.ws(1):
                T.copy(C1, C[by * bM, bx * bN])
            with T.ws(0):
                T.copy(C0, C[by * bM, bx * bN + half])

    return main


def doubled_by_rows(n, block=128, stages=2, skip=0, named=False):
    """Tiles of a 1-D tensor from element `skip` on by TMA into one row of a stage each (the DSA
    indexer loads its keys' scales so), doubled out; the last tile past the end reads zeros.
    named: the tile's first element is given a name first."""

    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
            A_s = T.alloc_shared((stages, 1, block), "float32")
            ready = T.alloc_barrier([128] * stages)
            if named:
                first = bx * block + skip
                T.tma_copy(A[first:first + block], A_s[bx % stages, :, :], barrier=ready[bx % stages])
            else:
                T.tma_copy(A[bx * block + skip:(bx + 1) * block + skip], A_s[bx % stages, :, :],
                           barrier=ready[bx % stages])
            T.barrier_arrive(ready[bx % stages])
            T.barrier_wait(ready[bx % stages], 0)
            for i in T.Parallel(block):
                if bx * block + i < n:
                    B[bx * block + i] = A_s[bx % stages, 0, i] * 2

    return main


def thread_by_thread_pipeline(M, N, K, bM=64, bN=128, bK=64, dtype="float16", hinted=False):
    """TileLang's MLA decode (example_mla_decode_ws) style: `if tx < 128:` consumers multiply on
    T.wgmma_gemm; the other threads (its else) fill two stages with T.ptx_cp_async, each thread's
    copies arriving on the stage's barrier by T.cp_async_barrier_noinc. hinted: A's copies with
    tilec's L2 hints evict_first and 256-byte prefetches, B's with evict_last."""
    a_policy, a_prefetch, b_policy = ("evict_first", 256, "evict_last") if hinted else (None, None, None)

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=256) as (bx, by):
            A_s = T.alloc_shared((2, bM, bK), dtype)
            B_s = T.alloc_shared((2, bK, bN), dtype)
            C_l = T.alloc_fragment((bM, bN), "float32")
            ready = T.alloc_barrier([128, 128])
            free = T.alloc_barrier([128, 128])
            tx = T.get_thread_binding()
            if tx < 128:
                T.set_max_nreg(232, 1)
                T.clear(C_l)
                for k in T.serial(T.ceildiv(K, bK)):
                    T.barrier_wait(ready[k % 2], (k // 2) % 2)
                    T.wgmma_gemm(A_s[k % 2, :, :], B_s[k % 2, :, :], C_l)
                    T.wait_wgmma(0)
                    T.barrier_arrive(free[k % 2])
                T.copy(C_l, C[by * bM, bx * bN])
            else:
                T.set_max_nreg(40, 0)
                for k in T.serial(T.ceildiv(K, bK)):
                    T.barrier_wait(free[k % 2], ((k // 2) % 2) ^ 1)
                    for r in T.serial(bM * bK // 8 // 128):
                        row = r * 16 + (tx - 128) // 8
                        col = (tx - 128) % 8 * 8
                        T.ptx_cp_async(T.access_ptr(A_s[k % 2, row, col], "w", 8),
                                       T.access_ptr(A[by * bM + row, k * bK + col], "r", 8), 8,
                                       eviction_policy=a_policy, prefetch_size=a_prefetch)
                    for r in T.serial(bK * bN // 8 // 128):
                        row = r * 8 + (tx - 128) // 16
                        col = (tx - 128) % 16 * 8
                        T.ptx_cp_async(T.access_ptr(B_s[k % 2, row, col], "w", 8),
                                       T.access_ptr(B[k * bK + row, bx * bN + col], "r", 8), 8,
                                       eviction_policy=b_policy)
                    T.cp_async_barrier_noinc(ready[k % 2])

    return main


# --- no GPU needed: the IR and source NVRTC built for sm_90a -------------------------------

def test_if_on_the_thread_index_is_a_group_and_its_else_the_other_threads():
    ir = emit(thread_by_thread_pipeline(512, 512, 512), "ir")
    # `if tx < 128:` and its else are groups [0, 128) and [128, 256): the consumers' wgmma is
    # one warpgroup's, and each reads the producers' cp.async stores after its proxy fence.
    assert re.search(r"if tx >= 0 and tx < 128:\n\s+group_tx\w* = tx\n", ir)
    assert re.search(r"if tx >= 128 and tx < 256:\n\s+group_tx\w* = tx - 128\n", ir)
    assert re.search(r"fence_proxy_async\(\)\)\n\s+T.evaluate\(T.device.wgmma_gemm_ss<64, 128, 64, 1, 1,", ir)
    assert re.search(r"cp_async_16\(T.address_of\(A_s\[k\w* % 2, row\[0\], col\[0\]\]\), "
                     r"T.address_of\(A\[by \* 64 \+ row\[0\], k\w* \* 64 \+ col\[0\]\]\), True\)", ir)
    assert re.search(r"cp_async_mbarrier_arrive_noinc\(T.address_of\(ready\[k\w* % 2\]\)\)", ir)
    assert "setmaxnreg_inc<232>" in ir and "setmaxnreg_dec<40>" in ir


def test_cp_async_takes_l2_hints_as_template_arguments():
    ir = emit(thread_by_thread_pipeline(512, 512, 512, hinted=True), "ir")
    assert re.search(r"cp_async_16<1, 256>\(T.address_of\(A_s\[", ir)
    assert re.search(r"cp_async_16<2, 0>\(T.address_of\(B_s\[", ir)
    ptx = emit(thread_by_thread_pipeline(512, 512, 512, hinted=True), "ptx")
    assert "createpolicy.fractional.L2::evict_first.b64" in ptx
    assert "createpolicy.fractional.L2::evict_last.b64" in ptx
    assert re.search(r"cp.async.cg.shared.global.L2::cache_hint.L2::256B \[%r\d+\], \[%rd\d+\], 16, %r\d+, %rd\d+;", ptx)
    assert re.search(r"cp.async.cg.shared.global.L2::cache_hint \[%r\d+\], \[%rd\d+\], 16, %r\d+, %rd\d+;", ptx)


def test_a_groups_tile_ops_are_spread_over_its_own_threads_numbered_from_its_first():
    ir = emit(producer_consumer(1024, 1024, 1024, producer=0), "ir")
    # The consumer (warp group 1) runs the gemm as one warpgroup's wgmma (grid 1 x 1), and its
    # 128 threads, numbered from tx - 128, store the accumulator.
    assert "wgmma_gemm_ss<128, 128, 64, 1, 1," in ir
    epilogue = ir[ir.rindex("if tx >= 128 and tx < 256:"):]
    number = re.match(r"if tx >= 128 and tx < 256:\n\s+(group_tx\w*) = tx - 128\n", epilogue)
    assert number and f"{number.group(1)} // 4 % 8" in epilogue
    # The producer's first thread (0) adds each tile's bytes to the stage's barrier, then issues it.
    assert re.search(r"if tx >= 0 and tx < 1:\n\s+T.evaluate\(T.device.mbarrier_expect_tx\(T.address_of\("
                     r"bars\[k % 2\]\), 16384\)\)\n\s+T.evaluate\(T.device.tma_load\(T.tensor_map\(0\)", ir)
    # The program orders its groups: no barrier of the block in the loop.
    loop = ir[ir.index("for k in"):]
    assert "sync_threads()" not in loop and "sync_threads_partial" not in loop


def test_without_mbarriers_tilec_separates_the_groups_from_the_blocks_copy_and_within_each():
    ir = emit(split_columns(1024, 1024, 1024), "ir")
    loop = ir[ir.index("for k in"):]
    # The block's copy of A_s, then its barrier before the groups read A_s; inside each group a
    # named barrier of its 128 threads between its copy of B and its gemm (ids 2 and 3: the
    # groups [0, 128) and [128, 256)), with the async-proxy fence wgmma needs.
    assert loop.index("T.device.sync_threads()") < loop.index("if tx >= 128 and tx < 256:")
    assert "fence_proxy_async()" in loop
    assert "sync_threads_partial<3, 128>()" in loop and "sync_threads_partial<2, 128>()" in loop


def test_a_branch_of_producer_threads_synchronizes_them_alone(tmp_path):
    """sparse_mla_fwd_pipelined's producer: `elif tx >= 128:` threads check an index into shared
    memory and cp.async the rows it keeps. The branch is a group (it arrives on a barrier), so
    the shared flag's hand-offs take its named barrier, not the block's (which the consumers,
    waiting on that barrier, would never reach)."""
    main = kernel_source([
        "S = T.alloc_shared((64, 64), 'float16')",
        "ok = T.alloc_shared((64,), 'bool')",
        "tx = T.get_thread_binding()",
        "if tx < 128:",
        "    T.barrier_wait(bars[0], 0)",
        "    T.copy(S[0:64, :], C[0:64, :])",
        "elif tx >= 128:",
        "    for r in T.serial(4):",
        "        ok[r * 16 + (tx - 128) // 8] = A[r * 16 + (tx - 128) // 8, 0] > 0",
        "        if ok[r * 16 + (tx - 128) // 8]:",
        "            T.ptx_cp_async(T.access_ptr(S[r * 16 + (tx - 128) // 8, (tx - 128) % 8 * 8], 'w', 8),",
        "                           T.access_ptr(A[r * 16 + (tx - 128) // 8, (tx - 128) % 8 * 8], 'r', 8), 8)",
        "    T.cp_async_barrier_noinc(bars[0])",
    ], tmp_path)
    ir = emit(main, "ir")
    producer = ir[ir.index("elif tx >= 128 and tx < 256:"):]
    assert "sync_threads_partial<3, 128>()" in producer and "T.device.sync_threads()" not in producer


@pytest.mark.parametrize("make", [producer_consumer, split_columns, thread_by_thread_pipeline])
def test_the_kernels_build_for_sm_90a(make):
    ptx = emit(make(512, 512, 512), "ptx")
    assert "wgmma.mma_async" in ptx
    if make is producer_consumer:
        assert "cp.async.bulk.tensor.2d" in ptx and "mbarrier.expect_tx" in ptx


@pytest.mark.parametrize("named", [False, True])
def test_a_one_dim_tile_is_one_tma_box(named):
    assert "cp.async.bulk.tensor.1d" in emit(doubled_by_rows(300, named=named), "ptx")
    assert "cp.async.bulk.tensor.1d" in emit(doubled_by_rows(300, skip=4, named=named), "ptx")


@pytest.mark.parametrize("named", [False, True])
@pytest.mark.parametrize("skip", [1, 2, 3])
def test_a_tma_box_off_a_16_byte_boundary_is_an_error_at_its_line(skip, named):
    # On an H100 such a box stopped the kernel (an illegal instruction); 4 floats are 16 bytes
    with pytest.raises(CompileError, match=r"T.tma_copy: TMA can't move this tile.*provably a multiple of 16"):
        emit(doubled_by_rows(300, skip=skip, named=named), "source")


def test_set_max_nreg_is_setmaxnreg():
    assert "setmaxnreg_dec<40>()" in emit(producer_consumer(512, 512, 512, regs=True), "source")


def kernel_source(body, folder):
    src = (
        "import tilec.language as T\n"
        "@T.prim_func\n"
        "def main(A: T.Tensor((256, 64), 'float16'), C: T.Tensor((256, 64), 'float16')):\n"
        "    with T.Kernel(1, threads=256) as bx:\n"
        "        A_s = T.alloc_shared((128, 64), 'float16')\n"
        "        bars = T.alloc_barrier([128, 128])\n"
        + "".join("        " + line + "\n" for line in body))
    return prim_func_from_text(src, folder)


@pytest.mark.parametrize("body,message", [
    (["with T.ws(0):", "    with T.ws(1):", "        T.clear(A_s)"], "T.ws blocks cannot be nested"),
    (["with T.ws(0, 2):", "    T.clear(A_s)"], "the warp groups of one block are consecutive"),
    (["with T.ws(2):", "    T.clear(A_s)"], "warp group 2 is threads [256, 384), past the block's 256 threads"),
    (["with T.ws(0) as g:", "    T.clear(A_s)"], "T.ws(...) names nothing"),
    (["for i in T.serial(2):", "    b = T.alloc_barrier(128)"], "T.alloc_barrier goes in the T.Kernel block itself"),
    (["T.alloc_barrier(0)"], "an arrival count is between 1 and 1048575, not 0"),
    (["T.barrier_arrive(bars)"], "'bars' holds several barriers; pass one of them (bars[i])"),
    (["T.barrier_arrive(A_s[0, 0])"], "'mbarrier' is a barrier from T.alloc_barrier(...), not 'A_s'"),
    (["T.tma_copy(A[0:128, :], A_s)"], "a load into shared memory completes on a barrier"),
    (["T.tma_copy(A_s, C[0:128, :], barrier=bars[0])"], "a store to global memory completes on no barrier"),
    (["T.tma_copy(A[0:128, :], A_s, barrier=bars[0], cluster_mask=3)"],
     "T.tma_copy(cluster_mask=...) multicasts a tile to blocks of the thread block cluster; this T.Kernel has no "
     "cluster_dims"),
    (["T.mbarrier_arrive(bars[0], cta_id=1)"], "arrives at a barrier of another block of the thread block cluster; this T.Kernel has no cluster_dims"),
    (["T.alloc_cluster_barrier([1])"], "T.alloc_cluster_barrier makes barriers a thread block cluster's blocks share; "
                                       "this T.Kernel has no cluster_dims"),
    (["T.set_max_nreg(100, 1)"], "reg_count is a multiple of 8 from 24 to 256, not 100"),
    (["T.ptx_cp_async(T.access_ptr(A_s[0, 0], 'w', 8), T.access_ptr(A[0, 0], 'r', 8), 8, eviction_policy='last')"],
     "T.ptx_cp_async's eviction_policy is \"evict_first\", \"evict_normal\" or \"evict_last\", not str 'last'"),
    (["T.ptx_cp_async(T.access_ptr(A_s[0, 0], 'w', 8), T.access_ptr(A[0, 0], 'r', 8), 8, prefetch_size=512)"],
     "T.ptx_cp_async's prefetch_size is 64, 128 or 256 bytes, not 512"),
    # setmaxnreg.inc takes from what the block launched with (256 threads: 248 a thread); asked
    # for more, the growing warpgroup waits forever (the seesaw prefill's 224 + 224 + 64 hung)
    (["with T.ws(0):", "    T.set_max_nreg(256, 1)", "with T.ws(1):", "    T.set_max_nreg(256, 1)"],
     "ask for 256 on threads [0, 128), 256 on threads [128, 256): 65536 registers, but a block of 256 threads "
     "launches with 248 a thread (63488), and a growing warpgroup would wait forever for the other 2048"),
    (["with T.ws(1):", "    T.set_max_nreg(256, 1)"],
     "ask for 256 on threads [128, 256), 248 on the 128 others: 64512 registers"),
    (["T.ptx_cp_async(T.access_ptr(A[0, 0], 'w'), T.access_ptr(A_s[0, 0], 'r'), 8)"],
     "T.ptx_cp_async copies from global memory ('A_s' is shared) to shared memory ('A' is global)"),
    (["T.ptx_cp_async(T.access_ptr(A_s[0, 0], 'w'), T.access_ptr(A[0, 0], 'r'), 3)"],
     "T.ptx_cp_async moves 4, 8 or 16 bytes; 3 elements of float16 are 6"),
    (["T.ptx_cp_async(A_s[0, 0], T.access_ptr(A[0, 0], 'r'), 8)"], "is an address from T.access_ptr(...)"),
    (["tx = T.get_thread_binding()", "if tx < 128:", "    T.clear(A_s)", "elif tx < 200:", "    T.clear(A_s)"],
     "this branch runs tile ops on threads outside [0, 128) that are not one range of whole warps"),
])
def test_mistakes_are_errors_at_their_line(body, message, tmp_path):
    with pytest.raises(CompileError, match=r"kernel.py:\d+:\d+: error: .*" + re.escape(message)):
        emit(kernel_source(body, tmp_path), "ir")


def test_a_drop_above_what_ptxas_gave_the_threads_is_an_error_once_compiled(tmp_path):
    # setmaxnreg.dec to more registers than a thread holds (ptxas gives a kernel at most 255), or
    # .inc to fewer, is an illegal instruction on the GPU; known once ptxas has counted them
    main = kernel_source(["with T.ws(1):", "    T.set_max_nreg(256, 0)"], tmp_path)
    with skip_without_nvrtc(), pytest.raises(CompileError, match=r"kernel.py:\d+:\d+: error: "
                                             r"T.set_max_nreg\(256, 0\) drops thread 128's registers to 256, but it "
                                             r"holds \d+ \(what it launched with: ptxas gave the kernel \d+\)"):
        tilec.compile(main, target="cuda", arch="sm_90a")


@pytest.mark.parametrize("target,arch", [("cuda", "sm_80"), ("hip", "gfx90a")])
def test_targets_without_tma_refuse_mbarriers_at_the_line(target, arch):
    with pytest.raises(CompileError, match=r"by_hand\.py:\d+:\d+: error: an mbarrier .* needs CUDA sm_90a"):
        tilec.compile(producer_consumer(256, 256, 256), target=target, arch=arch)


def test_thread_groups_need_named_barriers_but_not_hopper():
    with pytest.raises(CompileError, match=r"by_hand\.py:\d+:\d+: error: a thread group .* needs CUDA's named "
                                           r"barriers; target hip has none"):
        tilec.compile(split_columns(256, 256, 256), target="hip", arch="gfx90a")
    source = emit_for(split_columns(256, 256, 256), "sm_80")
    assert "tilec_cuda::gemm_ss<128, 64, 64, 2, 2," in source and "sync_threads_partial<2, 128>()" in source


# --- on the CPU: each group a fiber ----------------------------------------------------------

def cpu_product(program, M, N, K, rng):
    kernel = tilec.compile(program, target="cpu")
    a, b = rand((M, K), "float16", rng), rand((K, N), "float16", rng)
    c = np.full((M, N), np.nan, np.float16)
    kernel(a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.linalg.norm(c - ref) / np.linalg.norm(ref) < 1e-3


# ragged tiles; more k steps than stages, fewer (one), and as many
@pytest.mark.parametrize("M,N,K,stages,producer", [(256, 256, 320, 2, 1), (200, 300, 64, 3, 0), (130, 129, 192, 3, 1)])
def test_producer_consumer_computes_the_product_on_the_cpu(M, N, K, stages, producer, rng):
    cpu_product(producer_consumer(M, N, K, stages=stages, producer=producer, regs=True), M, N, K, rng)


def test_thread_by_thread_pipeline_and_split_columns_compute_the_product_on_the_cpu(rng):
    cpu_product(thread_by_thread_pipeline(128, 256, 320), 128, 256, 320, rng)
    cpu_product(thread_by_thread_pipeline(128, 256, 320, hinted=True), 128, 256, 320, rng)
    cpu_product(split_columns(200, 300, 160), 200, 300, 160, rng)


def test_suffix_sums_of_a_group_of_256_of_1024_threads_on_the_cpu(rng):
    kernel = tilec.compile(suffix_sums(4), target="cpu")
    x = rng.integers(-1000, 1000, size=(4, 256)).astype(np.int32)
    y = np.full((4, 256), -1, np.int32)
    kernel(x, y)
    np.testing.assert_array_equal(y, np.flip(np.cumsum(np.flip(x, 1), 1), 1))


def run_on_the_cpu(main, rng):
    """kernel_source's program on the CPU: A random, C poisoned before the run."""
    a = rand((256, 64), "float16", rng)
    c = np.full((256, 64), np.nan, np.float16)
    tilec.compile(main, target="cpu")(a, c)
    return a, c


def test_a_groups_later_statements_wait_for_its_earlier_ones_on_the_cpu(tmp_path, rng):
    # warp group 0's second T.ws(0) block reads what its first wrote, after waiting for group 1:
    # both blocks are the same threads, one after the other
    main = kernel_source([
        "v = T.alloc_fragment((64,), 'float32')",
        "with T.ws(0):",
        "    for i in T.Parallel(64):",
        "        v[i] = T.Cast('float32', A[i, 0])",
        "    T.barrier_wait(bars[0], 0)",
        "with T.ws(1):",
        "    T.copy(A[0:128, :], A_s)",
        "    T.barrier_arrive(bars[0])",
        "with T.ws(0):",
        "    for i in T.Parallel(64):",
        "        C[i, 0] = T.Cast('float16', v[i]) + A_s[i, 1]",
    ], tmp_path)
    a, c = run_on_the_cpu(main, rng)
    np.testing.assert_array_equal(c[:64, 0], a[:64, 0] + a[:64, 1])


def test_a_group_may_spin_on_a_flag_another_sets_on_the_cpu(tmp_path, rng):
    main = kernel_source([
        "flag = T.alloc_shared((1,), 'int32')",
        "flag[0] = 0",
        "with T.ws(0):",
        "    while flag[0] == 0:",
        "        T.sync_threads()",
        "    T.copy(A_s[0:64, :], C[0:64, :])",
        "with T.ws(1):",
        "    T.copy(A[0:128, :], A_s)",
        "    T.sync_threads()",
        "    flag[0] = 1",
    ], tmp_path)
    a, c = run_on_the_cpu(main, rng)
    np.testing.assert_array_equal(c[:64], a[:64])


def test_an_arrival_before_the_reads_it_guards_shows_on_the_cpu(tmp_path, rng):
    # The consumer frees the stage before it reads it: on a GPU the producer may overwrite it
    # first, or not; on the CPU the arrival that completes the phase lets the producer run first,
    # every time, so the race shows as a wrong result.
    main = kernel_source([
        "with T.ws(0):",
        "    T.copy(A[0:128, :], A_s)",
        "    T.barrier_arrive(bars[0])",
        "    T.barrier_wait(bars[1], 0)",
        "    T.fill(A_s, 0)",
        "with T.ws(1):",
        "    T.barrier_wait(bars[0], 0)",
        "    T.barrier_arrive(bars[1])",
        "    T.copy(A_s, C[0:128, :])",
    ], tmp_path)
    a, c = run_on_the_cpu(main, rng)
    assert np.all(c[:128] == 0)


def test_groups_that_would_wait_for_each_other_forever_are_an_error_naming_each_wait(tmp_path):
    # the consumer waits for the producer's barrier and the producer for the consumer's
    main = kernel_source([
        "with T.ws(0):",
        "    T.barrier_wait(bars[0], 0)",
        "    T.barrier_arrive(bars[1])",
        "with T.ws(1):",
        "    T.barrier_wait(bars[1], 0)",
        "    T.tma_copy(A[0:128, :], A_s, barrier=bars[0])",
        "    T.barrier_arrive(bars[0])",
    ], tmp_path)
    kernel = tilec.compile(main, target="cpu")
    a, c = np.ones((256, 64), np.float16), np.zeros((256, 64), np.float16)
    with pytest.raises(RuntimeError) as error:
        kernel(a, c)
    assert re.search(r"the kernel would hang: in block \(0\), every thread group left waits on an mbarrier phase "
                     r"that no thread can complete:\n  threads \[0, 128\) wait at .*kernel.py:8: T.barrier_wait\(bars\[0\], 0\) for the "
                     r"phase of parity 0; the barrier is in phase 0, with 128 of its 128 arrivals to come\n"
                     r"  threads \[128, 256\) wait at .*kernel.py:11: T.barrier_wait\(bars\[1\], 0\)", str(error.value))
    # the next call runs afresh, and stops again
    with pytest.raises(RuntimeError, match="the kernel would hang"):
        kernel(a, c)


def test_a_hang_names_its_block():
    # the producer of block (1, 1) alone never arrives
    @T.prim_func
    def main(A: T.Tensor((4, 128), "float32"), C: T.Tensor((4, 128), "float32")):
        with T.Kernel(2, 2, threads=256) as (bx, by):
            S = T.alloc_shared((128,), "float32")
            bars = T.alloc_barrier([128])
            with T.ws(0):
                T.barrier_wait(bars[0], 0)
                for i in T.Parallel(128):
                    C[bx * 2 + by, i] = S[i]
            with T.ws(1):
                for i in T.Parallel(128):
                    S[i] = A[bx * 2 + by, i]
                if bx * by == 0:
                    T.barrier_arrive(bars[0])

    a, c = np.ones((4, 128), np.float32), np.zeros((4, 128), np.float32)
    with pytest.raises(RuntimeError, match=r"the kernel would hang: in block \(1, 1\), every thread group left waits"
                                           r"[^\n]*:\n  threads \[0, 128\) wait at [^\n]*T.barrier_wait\(bars\[0\], 0\)"):
        tilec.compile(main, target="cpu")(a, c)
    np.testing.assert_array_equal(c[:3], a[:3])  # the other blocks finished


def test_a_wait_no_thread_can_complete_is_an_error_outside_groups_too(tmp_path):
    main = kernel_source(["T.barrier_arrive(bars[0])", "T.barrier_wait(bars[1], 0)"], tmp_path)
    with pytest.raises(RuntimeError, match=r"the kernel would hang: block \(0\) waits at .*kernel.py:8: "
                                           r"T.barrier_wait\(bars\[1\], 0\) for a barrier phase no thread can "
                                           r"complete \(the barrier is in phase 0, with 128 of its 128 arrivals to "
                                           r"come\)"):
        tilec.compile(main, target="cpu")(np.ones((256, 64), np.float16), np.zeros((256, 64), np.float16))


def test_on_the_cpu_a_phase_that_expects_bytes_no_load_brings_is_a_hang(tmp_path):
    # the CPU counts a phase's bytes as a GPU does: its arrivals are not enough
    main = kernel_source(["tx = T.get_thread_binding()", "if tx == 0:", "    T.mbarrier_expect_tx(bars[0], 64)",
                          "if tx < 128:", "    T.barrier_arrive(bars[0])", "T.barrier_wait(bars[0], 0)"], tmp_path)
    with pytest.raises(RuntimeError, match=r"the kernel would hang: block \(0\) waits at .*kernel.py:12: "
                                           r"T.barrier_wait\(bars\[0\], 0\) for a barrier phase no thread can "
                                           r"complete \(the barrier is in phase 0, with 0 of its 128 arrivals and 64 "
                                           r"bytes it expects to come\)"):
        tilec.compile(main, target="cpu")(np.ones((256, 64), np.float16), np.zeros((256, 64), np.float16))


def test_on_the_cpu_an_arrival_at_a_phase_waiting_for_bytes_is_an_error(tmp_path):
    # 256 threads at a barrier of 128 arrivals whose phase expects bytes: the 129th finds it full
    main = kernel_source(["tx = T.get_thread_binding()", "if tx == 0:", "    T.mbarrier_expect_tx(bars[0], 64)",
                          "T.barrier_arrive(bars[0])"], tmp_path)
    with pytest.raises(RuntimeError, match=r"at .*kernel.py:10: T.barrier_arrive\(bars\[0\]\): a thread arrives at an "
                                           r"mbarrier whose phase has all its 128 arrivals and waits for 64 bytes it "
                                           r"expects"):
        tilec.compile(main, target="cpu")(np.ones((256, 64), np.float16), np.zeros((256, 64), np.float16))


@pytest.mark.parametrize("skip", [0, 4])
def test_one_dim_tiles_by_tma_on_the_cpu(skip, rng):
    a = rand((300,), "float32", rng)
    b = np.full(300, np.nan, np.float32)
    tilec.compile(doubled_by_rows(300, skip=skip), target="cpu")(a, b)
    np.testing.assert_array_equal(b[:300 - skip], 2 * a[skip:])
    np.testing.assert_array_equal(b[300 - skip:], 0)  # past the end: zeros


# --- on an sm_90 GPU ------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("skip", [0, 4])
def test_one_dim_tiles_by_tma(skip):
    # A 1-D tensor's map has no strides: the driver refused a null array for them
    # (CUDA_ERROR_INVALID_VALUE) until tensor_maps.cc passed one.
    torch = hopper_or_skip()
    a = torch.randn(300, device="cuda")
    b = torch.full_like(a, float("nan"))
    tilec.compile(doubled_by_rows(300, skip=skip))(a, b)
    assert torch.equal(b[:300 - skip], 2 * a[skip:]) and not b[300 - skip:].any()


@pytest.mark.gpu
@pytest.mark.parametrize("M,N,K,stages,producer", [(1024, 1024, 1024, 2, 1), (512, 768, 2048, 3, 0),
                                                   (1000, 1096, 960, 2, 1)])
def test_producer_consumer_computes_the_product(M, N, K, stages, producer):
    torch = hopper_or_skip()
    kernel = tilec.compile(producer_consumer(M, N, K, stages=stages, producer=producer))
    check(kernel, M, N, K, "float16", False, torch, out_dtype="float16")


@pytest.mark.gpu
@pytest.mark.parametrize("M,N,K,hinted", [(512, 512, 512, False), (1024, 768, 2048, False), (1024, 768, 2048, True)])
def test_thread_by_thread_pipeline_computes_the_product(M, N, K, hinted):
    torch = hopper_or_skip()
    check(tilec.compile(thread_by_thread_pipeline(M, N, K, hinted=hinted)), M, N, K, "float16", False, torch,
          out_dtype="float16")


@pytest.mark.gpu
@pytest.mark.parametrize("M,N,K", [(1024, 1024, 1024), (1000, 1096, 960)])
def test_split_columns_computes_the_product(M, N, K):
    torch = hopper_or_skip()
    check(tilec.compile(split_columns(M, N, K)), M, N, K, "float16", False, torch, out_dtype="float16")


def suffix_sums(rows, radix=256, threads=1024):
    """The cumsum of TileLang's top-k selector: `if tx < radix:` threads of a 1024-thread block
    add up a histogram in shared memory, meeting at T.sync_threads(3, radix), a barrier of theirs
    alone (the others have gone on to the block's barrier after the branch)."""

    steps = radix.bit_length() - 1

    @T.prim_func
    def main(X: T.Tensor((rows, radix), "int32"), Y: T.Tensor((rows, radix), "int32")):
        with T.Kernel(rows, threads=threads) as bx:
            tx = T.get_thread_binding()
            h = T.alloc_shared([radix], "int32")
            v = T.alloc_var("int32")
            if tx < radix:
                h[tx] = X[bx, tx]
            T.sync_threads()
            if tx < radix:
                for i in T.serial(steps):
                    offset = 1 << i
                    T.sync_threads(3, radix)
                    if tx < radix - offset:
                        v = h[tx] + h[tx + offset]
                    T.sync_threads(3, radix)
                    if tx < radix - offset:
                        h[tx] = v
            T.sync_threads()
            if tx < radix:
                Y[bx, tx] = h[tx]

    return main


def test_a_barrier_of_part_of_the_block_is_its_groups():
    ir = emit(suffix_sums(4), "ir")
    group = ir[ir.index("if tx >= 0 and tx < 256:"):]
    assert group.count("sync_threads_partial<2, 256>()") == 2
    assert emit_for(suffix_sums(4), "sm_80").count("sync_threads_partial<2, 256>()") == 2


@pytest.mark.gpu
def test_suffix_sums_of_a_group_of_256_of_1024_threads():
    torch = hopper_or_skip()
    kernel = tilec.compile(suffix_sums(8))
    x = torch.randint(-1000, 1000, (8, 256), device="cuda", dtype=torch.int32)
    y = torch.full((8, 256), -1, device="cuda", dtype=torch.int32)
    kernel(x, y)
    expected = x.flip(1).cumsum(1).flip(1).to(torch.int32)
    assert torch.equal(y, expected)

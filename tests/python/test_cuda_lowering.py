"""What the CUDA lowering makes of a kernel, checked in the generated source and IR (no GPU
needed: compiled with NVRTC for sm_90a with the Hopper path off), and the errors it gives; the
tests marked gpu run such kernels on the GPU against torch."""

import re

import ml_dtypes
import numpy as np
import pytest

import tilec
import tilec.language as T
from tilec import _core

from helpers import cpu_only, rand, rng, skip_without_nvrtc  # noqa: F401  (rng is a fixture)
from test_tile_ops import (batched_matmul_rasterized, cumsum_kernel, matmul_operand_in_registers,
                           matmul_rasterized, matmul_shared_epilogue, rows_rasterized)

ARCH = "sm_90a"


def cuda_compile(func):
    # The mma.sync / cp.async lowering: on sm_90a every gemm tile these tests use would run on
    # wgmma and TMA (test_hopper.py) unless its pass config turns it off.
    with skip_without_nvrtc():
        return tilec.compile(func, target="cuda", arch=ARCH, pass_configs={"tilec.wgmma": False})


def matmul(M, N, K, dtype, stages=3, threads=128, block=64, block_k=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=threads) as (bx, by):
            A_s = T.alloc_shared((block, block_k), dtype)
            B_s = T.alloc_shared((block_k, block), dtype)
            C_f = T.alloc_fragment((block, block), "float32")
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, block_k), num_stages=stages):
                T.copy(A[by * block, k * block_k], A_s)
                T.copy(B[k * block_k, bx * block], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[by * block, bx * block])

    return main


@pytest.mark.parametrize("dtype,shape", [("bfloat16", "16, 32, 32"), ("float16", "16, 32, 32"),
                                         ("float32", "64, 64, 32"), ("float8_e4m3", "64, 64, 32")])
def test_gemm_runs_on_tensor_cores_from_swizzled_tiles(dtype, shape):
    source = cuda_compile(matmul(256, 256, 256, dtype)).get_kernel_source()
    assert f"tilec_cuda::gemm_ss<64, 64, 32, 2, 2, false, false, true, true>" in source
    assert "tilec_cuda::swizzled_offset<" in source


def test_pipelined_copies_are_cp_async_in_stages():
    source = cuda_compile(matmul(256, 256, 256, "bfloat16", stages=3)).get_kernel_source()
    assert "tilec_cuda::cp_async_16(" in source
    assert "tilec_cuda::cp_async_wait<1>();" in source
    assert source.count("tilec_cuda::cp_async_commit();") == 3  # two ahead, one an iteration
    # The stages live side by side: 3 x 64 x 32 bf16 for A.
    assert "A_s[" in source and "* 2048 + tilec_cuda::swizzled_offset<32, 2>(" in source
    # One barrier an iteration (the pipeline's own), none from the gemm or copies.
    loop = source[source.index("for (int32_t k_stage_iter"):]
    assert loop.count("tilec_cuda::sync_threads();") == 1


# Rows of a tensor whose byte length is a multiple of 8 (or 4) but not 16 still load
# asynchronously, in the widest cp.async their alignment allows (K = 3900 in bf16 is 7800 bytes).
@pytest.mark.parametrize("dtype,K,width", [("bfloat16", 196, 8), ("bfloat16", 194, 4), ("float32", 198, 8),
                                           ("float32", 197, 4), ("bfloat16", 256, 16)])
def test_cp_async_takes_the_widest_access_the_rows_allow(dtype, K, width):
    source = cuda_compile(matmul(200, K, K, dtype, stages=3)).get_kernel_source()  # A and B rows alike
    widths = set(re.findall(r"tilec_cuda::cp_async_(\d+)\(", source))
    assert widths == {str(width)}, widths
    assert "tilec_cuda::cp_async_wait<1>();" in source


def test_general_variant_tests_each_access_width_at_run_time():
    kernel = tilec.compile(matmul(200, 196, 196, "bfloat16"), target="cuda", arch=ARCH,
                           pass_configs={"tilec.wgmma": False, "tilec.specialize_contiguous": False})
    source = kernel.get_kernel_source()
    assert "tilec_cuda::cp_async_8(" in source and "is_aligned((&A[0]), 8)" in source, source


@pytest.mark.gpu
@pytest.mark.skipif(not _core.cuda_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype,M,N,K", [("bfloat16", 200, 196, 196), ("bfloat16", 130, 194, 194),
                                         ("float32", 200, 198, 197), ("float16", 4000, 4100, 3900)])
@pytest.mark.parametrize("wgmma", [True, False])
def test_gpu_gemm_with_rows_of_8_or_4_byte_multiples(dtype, M, N, K, wgmma):
    torch = pytest.importorskip("torch")
    td = getattr(torch, dtype)
    kernel = tilec.compile(matmul(M, N, K, dtype, stages=3, block_k=64 if dtype != "float32" else 32),
                           target="cuda", pass_configs={"tilec.wgmma": wgmma})
    a = torch.randn(M, K, device="cuda").to(td)
    b = torch.randn(K, N, device="cuda").to(td)
    c = torch.full((M, N), float("nan"), device="cuda")
    kernel(a, b, c)
    expected = a.double() @ b.double()
    error = ((c.double() - expected).norm() / expected.norm()).item()
    assert error < (5e-3 if dtype == "float32" else 1e-2), error


def test_one_stage_runs_serially_with_barriers():
    source = cuda_compile(matmul(256, 256, 256, "bfloat16", stages=1)).get_kernel_source()
    assert "cp_async_wait<" not in source
    assert "tilec_cuda::cp_async_wait_all();" in source
    loop = source[source.index("for (int32_t k = 0"):]
    assert loop.count("tilec_cuda::sync_threads();") == 2  # before the copies, before the gemm


def test_shared_barrier_only_where_data_crosses_threads():
    @T.prim_func
    def stage(X: T.Tensor((128,), "float32"), Y: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            s = T.alloc_shared((128,), "float32")
            f = T.alloc_fragment((128,), "float32")
            T.copy(X, f)
            for i in T.Parallel(128):
                f[i] = f[i] * 2.0
            T.copy(f, s)
            for i in T.Parallel(128):
                Y[i] = s[127 - i]

    source = cuda_compile(stage).get_kernel_source()
    assert source.count("tilec_cuda::sync_threads();") == 1


def shared_offsets(source):
    return dict(re.findall(r"\* const (\w+) = reinterpret_cast<[\w:]+\*>\(tilec_shared \+ (\d+)\);", source))


def test_shared_memory_is_reused_once_a_buffer_is_dead():
    source = cuda_compile(matmul_shared_epilogue.__wrapped__(256, 256, 256, dtype="bfloat16")).get_kernel_source()
    offsets = shared_offsets(source)
    # The pipeline's three A stages (12 KiB) and B stages (12 KiB) are alive together; the
    # epilogue tile C_s comes after both and takes the bytes of the A stages.
    assert offsets == {"A_s": "12288", "B_s": "0", "C_s": "0"} or offsets == {"A_s": "0", "B_s": "12288", "C_s": "0"}
    # ... behind a barrier: the last gemm's reads of the stages come before C_s is written.
    epilogue = source[source.index("cp_async_wait_all();"):]
    assert epilogue.index("tilec_cuda::sync_threads();") < epilogue.index("C_s[")


def test_shared_buffers_alive_together_do_not_overlap():
    @T.prim_func
    def two_tiles(X: T.Tensor((64,), "float32"), Y: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            s = T.alloc_shared((64,), "float32")
            t = T.alloc_shared((64,), "float32")
            T.copy(X, s)
            T.copy(X, t)
            for i in T.Parallel(64):
                Y[i] = s[63 - i] + t[i]

    offsets = shared_offsets(cuda_compile(two_tiles).get_kernel_source())
    assert sorted(offsets.values()) == ["0", "256"]


def test_reduction_across_warps_shuffles_then_exchanges():
    @T.prim_func
    # Rows of 512: each is spread over all four warps (4 elements a thread).
    def row_max(X: T.Tensor((4, 512), "float32"), Y: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            x = T.alloc_fragment((4, 512), "float32")
            m = T.alloc_fragment((4,), "float32")
            T.copy(X, x)
            T.reduce_max(x, m, dim=1)
            T.copy(m, Y)

    source = cuda_compile(row_max).get_kernel_source()
    assert "tilec_cuda::shfl_xor(" in source
    assert "m_exchange" in source


def scale_rows(M=64, N=256, block_M=16, block_N=128, transposed=False):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((N, M) if transposed else (M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                if transposed:
                    B[bx * block_N + j, by * block_M + i] = A[by * block_M + i, bx * block_N + j] * 2
                else:
                    B[by * block_M + i, bx * block_N + j] = A[by * block_M + i, bx * block_N + j] * 2

    return main


def test_parallel_loops_move_contiguous_runs_as_vectors():
    source = cuda_compile(scale_rows()).get_kernel_source()
    # 16 x 128 halves over 128 threads: runs of 8 (16 bytes) a thread.
    assert "tilec_cuda::load_vector<8>((&A_run[0]), (&A[" in source
    assert "tilec_cuda::store_vector<8>((&B[" in source
    # A store whose last index isn't the loop's last var stays scalar; the load still moves.
    source = cuda_compile(scale_rows(transposed=True)).get_kernel_source()
    assert "load_vector<8>" in source and "store_vector" not in source


def gather_rows(rows=64, cols=128, keys=200, threads=128):
    # Rows of X picked by Index into shared memory, a row of zeros where the index is -1; then
    # out to Y. (The gather of sparse attention's keys.)
    @T.prim_func
    def main(X: T.Tensor((keys, cols), "bfloat16"), Index: T.Tensor((rows,), "int32"),
             Y: T.Tensor((rows, cols), "bfloat16")):
        with T.Kernel(1, threads=threads) as bx:
            index = T.alloc_shared((rows,), "int32")
            tile = T.alloc_shared((rows, cols), "bfloat16")
            for i in T.Parallel(rows):
                index[i] = Index[i]
            for i, j in T.Parallel(rows, cols):
                tile[i, j] = T.if_then_else(index[i] >= 0, X[T.max(index[i], 0), j], 0)
            T.copy(tile, Y)

    return main


def row_tail(rows=64, cols=248, padded=256):
    # Rows padded with zeros past their end: the load's condition changes within a run.
    @T.prim_func
    def main(A: T.Tensor((rows, cols), "float16"), B: T.Tensor((rows, padded), "float16")):
        with T.Kernel(1, threads=128) as bx:
            for i, j in T.Parallel(rows, padded):
                B[i, j] = T.if_then_else(j < cols, A[i, j], T.float16(0))

    return main


def test_a_gather_by_row_index_copies_16_bytes_by_cp_async_read_only_under_its_condition():
    source = cuda_compile(gather_rows()).get_kernel_source()
    # The int32 row index doesn't run along the row: runs of 8 bfloat16 go straight to shared
    # memory, each read only where its row's index is valid (and in bounds, the guard lowering
    # adds), zeros elsewhere; one wait for them all.
    copy = re.search(r"tilec_cuda::cp_async_16\(\(tilec_cuda::shared_address\(tile\) \+ .*?\), \(&X\[.*\]\), (.*)\);",
                     source)
    assert copy, source
    assert ">= 0" in copy.group(1) and "< INT64_C(200)" in copy.group(1)
    assert source.count("cp_async_wait_all") == 1 and "load_vector" not in source


def scale_gathered_rows(rows=64, cols=128, keys=200):
    # A gather whose value is more than the load: the run passes through registers, each
    # vector read only where its row's index is valid, zeros elsewhere.
    @T.prim_func
    def main(X: T.Tensor((keys, cols), "bfloat16"), Index: T.Tensor((rows,), "int32"),
             Y: T.Tensor((rows, cols), "bfloat16")):
        with T.Kernel(1, threads=128) as bx:
            tile = T.alloc_shared((rows, cols), "bfloat16")
            for i, j in T.Parallel(rows, cols):
                tile[i, j] = T.if_then_else(Index[i] >= 0, X[T.max(Index[i], 0), j], 0) * 2
            T.copy(tile, Y)

    return main


def test_a_gather_computed_on_reads_a_predicated_vector_into_registers():
    source = cuda_compile(scale_gathered_rows()).get_kernel_source()
    # the row's index read once (passes/gpu/bind_repeated_loads.h), then the predicated load
    assert re.search(r"const int32_t (reused\w*) = Index\[[^\n]*\n(.*\n)*?.*tilec_cuda::load_vector_or_zero<8>\("
                     r"\(&X_run\[0\]\), \(&X\[.*\]\), \1 >= 0", source), source
    assert "cp_async" not in source.split("T.Parallel")[1].split("T.copy")[0]


def test_a_load_whose_condition_changes_within_a_run_stays_element_by_element():
    # The vector read of row 63's last run would pass A's end (the condition keeps each
    # element's read in bounds, and the run's vector read would ignore it).
    source = cuda_compile(row_tail()).get_kernel_source()
    assert "load_vector" not in source, source
    assert "store_vector<8>((&B[" in source


def pipelined_gather(steps=4, rows=32, cols=64, keys=200):
    # Each step gathers rows of X by index into shared memory (zeros for -1) and adds them up:
    # sparse attention's loop over its chosen keys, in small.
    @T.prim_func
    def main(X: T.Tensor((keys, cols), "bfloat16"), Index: T.Tensor((steps * rows,), "int32"),
             Y: T.Tensor((rows, cols), "float32")):
        with T.Kernel(1, threads=128) as bx:
            tile = T.alloc_shared((rows, cols), "bfloat16")
            acc = T.alloc_fragment((rows, cols), "float32")
            T.clear(acc)
            for k in T.Pipelined(steps, num_stages=2):
                for i, j in T.Parallel(rows, cols):
                    tile[i, j] = T.if_then_else(Index[k * rows + i] >= 0, X[T.max(Index[k * rows + i], 0), j], 0)
                for i, j in T.Parallel(rows, cols):
                    acc[i, j] += tile[i, j]
            T.copy(acc, Y)

    return main


def test_a_pipelined_loop_stages_a_gather_and_waits_for_it_a_step_later():
    source = cuda_compile(pipelined_gather()).get_kernel_source()
    loop = source[source.index("for (int32_t k_stage_iter"):]
    # step k + 1's gather is issued into the other stage before step k's sum, and waited for at
    # the next step's start: no wait of its own
    assert loop.index("cp_async_wait<0>") < loop.index("if (k_stage_iter + 1 < 4)") < loop.index("cp_async_16(")
    assert "(k_stage_iter + 1) & 1) * 2048" in loop and "(k_stage_iter & 1) * 2048" in loop
    assert loop.count("cp_async_wait_all") == 1  # after the loop
    assert loop[:loop.index("cp_async_wait_all")].count("sync_threads") == 1  # the pipeline's own


def gathered_sums(X, index, steps=4, rows=32):
    picked = np.where((index >= 0)[:, None], X[np.maximum(index, 0)].astype(np.float32), 0)
    return picked.reshape(steps, rows, -1).sum(axis=0)


@cpu_only("the same kernel on the GPU: test_gpu_gathered_rows_and_padded_tails_match_torch")
def test_a_pipelined_gather_sums_the_rows_it_picks(rng):
    X = rand((200, 64), "bfloat16", rng)
    index = rng.integers(-1, 200, size=128).astype(np.int32)
    Y = np.full((32, 64), np.nan, np.float32)
    tilec.compile(pipelined_gather(), target="cpu")(X, index, Y)
    np.testing.assert_allclose(Y, gathered_sums(X, index), rtol=1e-6, atol=1e-6)


@pytest.mark.gpu
@pytest.mark.skipif(not _core.cuda_available(), reason="needs a CUDA GPU")
def test_gpu_gathered_rows_and_padded_tails_match_torch():
    torch = pytest.importorskip("torch")
    X = torch.randn(200, 128, device="cuda", dtype=torch.bfloat16)
    index = torch.randint(-1, 200, (64,), device="cuda", dtype=torch.int32)
    Y = torch.full((64, 128), float("nan"), device="cuda", dtype=torch.bfloat16)
    tilec.compile(gather_rows(), target="cuda")(X, index, Y)
    expected = torch.where((index >= 0)[:, None], X[index.clamp(min=0).long()], 0)
    assert torch.equal(Y, expected)
    Y.fill_(float("nan"))
    tilec.compile(scale_gathered_rows(), target="cuda")(X, index, Y)
    assert torch.equal(Y, expected * 2)
    A = torch.randn(64, 248, device="cuda", dtype=torch.float16)
    B = torch.full((64, 256), float("nan"), device="cuda", dtype=torch.float16)
    tilec.compile(row_tail(), target="cuda")(A, B)
    assert torch.equal(B, torch.nn.functional.pad(A, (0, 8)))
    X = torch.randn(200, 64, device="cuda", dtype=torch.bfloat16)
    index = torch.randint(-1, 200, (128,), device="cuda", dtype=torch.int32)
    Y = torch.full((32, 64), float("nan"), device="cuda")
    tilec.compile(pipelined_gather(), target="cuda")(X, index, Y)
    expected = gathered_sums(X.float().cpu().numpy(), index.cpu().numpy())
    np.testing.assert_allclose(Y.cpu().numpy(), expected, rtol=1e-6, atol=1e-6)


def rows_from_a_start(steps=4, rows=32, cols=64):
    # Y = the sum of `steps` blocks of rows of X from a start computed before the loop (a scalar
    # of each thread's, as TileLang's fp8_lighting_indexer starts its keys)
    @T.prim_func
    def main(X: T.Tensor((200, cols), "bfloat16"), Starts: T.Tensor((2,), "int32"),
             Y: T.Tensor((rows, cols), "float32")):
        with T.Kernel(1, threads=128) as bx:
            tile = T.alloc_shared((rows, cols), "bfloat16")
            acc = T.alloc_fragment((rows, cols), "float32")
            start = T.alloc_var("int32")
            start = T.min(Starts[0], Starts[1])
            T.clear(acc)
            for k in T.Pipelined(steps, num_stages=3):
                T.copy(X[start + k * rows, 0], tile)
                for i, j in T.Parallel(rows, cols):
                    acc[i, j] += tile[i, j]
            T.copy(acc, Y)

    return main


def test_a_copy_from_a_scalar_start_set_before_the_loop_runs_stages_ahead():
    source = cuda_compile(rows_from_a_start()).get_kernel_source()
    loop = source[source.index("for (int32_t k_stage_iter"):]
    assert loop.index("cp_async_wait<1>") < loop.index("if (k_stage_iter + 2 < 4)") < loop.index("cp_async_16(")
    assert source[:source.index("for (int32_t k_stage_iter")].count("cp_async_commit") == 2


def rows_from_a_start_reference(X, starts, steps=4, rows=32):
    start = int(starts.min())
    return X[start:start + steps * rows].astype(np.float32).reshape(steps, rows, -1).sum(axis=0)


@cpu_only("the same kernel on the GPU: test_gpu_rows_from_a_scalar_start_match_numpy")
def test_rows_from_a_scalar_start_on_the_cpu(rng):
    X = rand((200, 64), "bfloat16", rng)
    starts = np.array([61, 37], np.int32)
    Y = np.full((32, 64), np.nan, np.float32)
    tilec.compile(rows_from_a_start(), target="cpu")(X, starts, Y)
    np.testing.assert_allclose(Y, rows_from_a_start_reference(X, starts), rtol=1e-6, atol=1e-6)


@pytest.mark.gpu
@pytest.mark.skipif(not _core.cuda_available(), reason="needs a CUDA GPU")
def test_gpu_rows_from_a_scalar_start_match_numpy():
    torch = pytest.importorskip("torch")
    X = torch.randn(200, 64, device="cuda", dtype=torch.bfloat16)
    starts = torch.tensor([61, 37], device="cuda", dtype=torch.int32)
    Y = torch.full((32, 64), float("nan"), device="cuda")
    tilec.compile(rows_from_a_start(), target="cuda")(X, starts, Y)
    expected = rows_from_a_start_reference(X.float().cpu().numpy(), starts.cpu().numpy())
    np.testing.assert_allclose(Y.cpu().numpy(), expected, rtol=1e-6, atol=1e-6)


def named_value_rows(M=16, N=128):
    # The body names its value before the store, as TileLang's programs often do.
    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
        with T.Kernel(1, threads=128) as bx:
            for i, j in T.Parallel(M, N):
                doubled = A[i, j] * 2
                B[i, j] = doubled + doubled

    return main


def test_a_parallel_body_that_names_its_value_first_still_moves_vectors():
    source = cuda_compile(named_value_rows()).get_kernel_source()
    assert "tilec_cuda::load_vector<8>((&A_run[0]), (&A[" in source
    assert "tilec_cuda::store_vector<8>((&B[" in source
    # (one named by a call with a side effect stays named: ParallelNest's C++ test)


def test_a_tile_copied_past_the_tensors_end_stores_vectors_under_one_row_check():
    # The last block's rows pass B's end: T.copy's bounds check of the rows holds or fails for
    # a whole run along the row, so each run is one vector store under one test (it was a
    # scalar store and a test per element).
    @T.prim_func
    def main(A: T.Tensor((100, 128), "float16"), B: T.Tensor((100, 128), "float16")):
        with T.Kernel(T.ceildiv(100, 64), threads=128) as bx:
            a = T.alloc_fragment((64, 128), "float32")
            T.copy(A[bx * 64:(bx + 1) * 64, :], a)
            for i, j in T.Parallel(64, 128):
                a[i, j] = a[i, j] * 2
            T.copy(a, B[bx * 64:(bx + 1) * 64, :])

    source = cuda_compile(main).get_kernel_source()
    store = re.search(r"if \(([^\n]*)\) \{\n(\s*alignas[^\n]*\n)*[^\n]*\n(.*\n){0,4}?\s*tilec_cuda::store_vector<(\d)>\(\(&B\[", source)
    assert store, source
    assert "< 100" in store.group(1) and "128" not in store.group(1), store.group(1)
    assert int(store.group(4)) >= 2



# --- the elements of a T.Parallel loop (TileLang's layernorm backward, online softmax) -----

def row_centered(D):
    # `v` is assigned in both loops (as TileLang's layernorm backward assigns dy_v): each
    # loop's elements have their own, and the loops are spread over the threads.
    @T.prim_func
    def main(X: T.Tensor((4, D), "float32"), Y: T.Tensor((4, D), "float32")):
        with T.Kernel(4, threads=128) as bx:
            x = T.alloc_fragment((1, D), "float32")
            total = T.alloc_fragment((1,), "float32")
            for i, j in T.Parallel(1, D):
                v = X[bx, j] * 2.0
                x[i, j] = v
            T.reduce_sum(x, total, dim=1)
            for i, j in T.Parallel(1, D):
                v = x[i, j] - total[0] / D
                Y[bx, j] = v

    return main


def test_a_value_assigned_in_two_parallel_loops_is_each_elements_own():
    # The value was a kernel-wide local: both loops ran all D elements on every thread, and
    # each thread's registers of x got the elements the last thread holds.
    source = cuda_compile(row_centered(1024)).get_kernel_source()
    assert "< 1024; ++" not in source, source
    assert re.search(r"for \(int32_t s\w* = 0; s\w* < 8; \+\+s\w*\) \{\n\s*alignas\(4\) float v\[1\];", source), source


def test_a_loop_that_writes_a_threads_variable_and_uses_a_spread_fragment_is_an_error():
    # v, bound before the loop, is each thread's: the loop ran whole on every thread and
    # read elements of x that other threads hold (wrong results, no error).
    @T.prim_func
    def carried(X: T.Tensor((256,), "float32"), Y: T.Tensor((256,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            x = T.alloc_fragment((256,), "float32")
            T.copy(X, x)
            v = 0.0
            for i in T.Parallel(256):
                v = x[i] * 2.0
                Y[i] = v

    with pytest.raises(tilec.CompileError, match=r"stores into 'v', a local of each thread made outside the "
                                                 r"loop, so every thread runs the whole loop; but it also uses "
                                                 r"fragment 'x'"):
        cuda_compile(carried)


def softmax_with_lse(N):
    # TileLang's online softmax, one block of N a row: lse, max_x and sum_exp_x (one element,
    # held by every thread) are laid out before x.
    @T.prim_func
    def main(X: T.Tensor((8, N), "float16"), Y: T.Tensor((8, N), "float16")):
        with T.Kernel(8, threads=128) as i_m:
            x = T.alloc_fragment((1, N), "float16")
            y = T.alloc_fragment((1, N), "float16")
            lse = T.alloc_fragment((1,), "float32")
            max_x = T.alloc_fragment((1,), "float16")
            exp_x = T.alloc_fragment((1, N), "float32")
            sum_exp_x = T.alloc_fragment((1,), "float32")
            T.fill(lse, -T.infinity("float32"))
            T.copy(X[i_m, 0], x)
            T.reduce_max(x, max_x, dim=1, clear=True)
            for i, j in T.Parallel(1, N):
                exp_x[i, j] = T.exp2(x[i, j] * 1.44269504 - max_x[i] * 1.44269504)
            T.reduce_sum(exp_x, sum_exp_x, dim=1, clear=True)
            for i in T.Parallel(1):
                lse[i] = max_x[i] * 1.44269504 + T.log2(T.exp2(lse[i] - max_x[i] * 1.44269504) + sum_exp_x[i])
            for i, j in T.Parallel(1, N):
                y[i, j] = T.exp2(x[i, j] * 1.44269504 - lse[i])
            T.copy(y, Y[i_m, 0])

    return main


def test_a_row_held_by_every_thread_leaves_the_loops_over_the_row_spread():
    # The loops took the layout of max_x[i], extended over j: each thread held and computed
    # the whole row (N = 8192: arrays of 8192 a thread, an NVRTC compile of minutes).
    source = cuda_compile(softmax_with_lse(8192)).get_kernel_source()
    assert "tilec_cuda::half x[64];" in source and "float exp_x[64];" in source, source
    assert "[8192];" not in source, source


@pytest.mark.gpu
@pytest.mark.skipif(not _core.cuda_available(), reason="needs a CUDA GPU")
def test_gpu_parallel_loop_values_and_replicated_rows_match_torch():
    torch = pytest.importorskip("torch")
    D = 1024
    X = torch.randn(4, D, device="cuda")
    Y = torch.full_like(X, float("nan"))
    tilec.compile(row_centered(D), target="cuda")(X, Y)
    expected = 2 * X.double() - (2 * X.double()).sum(dim=1, keepdim=True) / D
    torch.testing.assert_close(Y.double(), expected, rtol=1e-5, atol=1e-4)
    N = 8192
    X = torch.randn(8, N, device="cuda", dtype=torch.float16)
    Y = torch.full_like(X, float("nan"))
    tilec.compile(softmax_with_lse(N), target="cuda")(X, Y)
    torch.testing.assert_close(Y.double(), X.double().softmax(dim=1), rtol=1e-2, atol=1e-3)

def per_thread_rows(rows=128, cols=256, dtype="float16"):
    # Each thread doubles its row into shared memory 8 elements at a time (T.vectorized, written
    # thread by thread); then the rows are read back flipped, by other threads.
    @T.prim_func
    def main(A: T.Tensor((rows, cols), dtype), B: T.Tensor((rows, cols), dtype)):
        with T.Kernel(1, threads=rows) as bx:
            tx = T.get_thread_binding()
            S = T.alloc_shared((rows, cols), dtype)
            for c in T.unroll(cols // 8):
                for e in T.vectorized(8):
                    S[tx, c * 8 + e] = A[tx, c * 8 + e] * 2
            for i, j in T.Parallel(rows, cols):
                B[i, j] = S[rows - 1 - i, j]

    return main


def test_vectorized_loops_of_a_threads_own_move_runs_as_vectors():
    source = cuda_compile(per_thread_rows()).get_kernel_source()
    assert "tilec_cuda::load_vector<8>((&A_run[0]), (&A[" in source
    assert "tilec_cuda::store_vector<8>((&S[" in source
    # each iteration writes columns of its own: the one barrier is before the flipped read
    assert source.count("sync_threads") == 1


def test_vectorized_loops_of_a_threads_own_on_the_cpu(rng):
    A = rand((128, 256), "float16", rng)
    B = np.full_like(A, np.nan)
    tilec.compile(per_thread_rows(), target="cpu")(A, B)
    np.testing.assert_array_equal(B, (A * 2)[::-1])


@pytest.mark.gpu
def test_gpu_vectorized_loops_of_a_threads_own_match_torch():
    torch = pytest.importorskip("torch")
    A = torch.randn(128, 256, device="cuda", dtype=torch.float16)
    B = torch.full_like(A, float("nan"))
    tilec.compile(per_thread_rows(), target="cuda")(A, B)
    torch.testing.assert_close(B, (A * 2).flip(0), rtol=0, atol=0)


def rows_scaled_where_positive(M=64, N=64, K=32):
    # C = A B^T, each row times its factor where that is positive: a T.Parallel whose body is one
    # `if` on the row alone.
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), F: T.Tensor((M,), "float32"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared((N, K), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            f = T.alloc_fragment((M,), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.copy(F, f)
            T.clear(acc)
            T.gemm(A_s, B_s, acc, transpose_B=True)
            for i, j in T.Parallel(M, N):
                if f[i] > 0:
                    acc[i, j] *= f[i]
            T.copy(acc, C)

    return main


def rows_scaled_where_positive_reference(A, B, F):
    return (A.astype(np.float32) @ B.astype(np.float32).T) * np.where(F > 0, F, 1)[:, None]


def test_a_test_of_the_row_alone_is_made_once_a_row_around_its_elements():
    # Each thread's rows are tested once each, in a loop outside the one over the row's elements
    # it holds: the compiler branches around them instead of selecting element by element.
    source = cuda_compile(rows_scaled_where_positive()).get_kernel_source()
    assert source.count("if (f[") == 1, source
    assert re.search(r"< 2; \+\+s_\d+\) \{\s*if \(f\[[^\n]*\] > 0x0p\+0f\) \{\s*#pragma unroll\s*for", source), source


def test_rows_scaled_where_their_test_holds_on_the_cpu(rng):
    A, B = rand((64, 32), "float16", rng), rand((64, 32), "float16", rng)
    F = rng.standard_normal(64).astype(np.float32)
    C = np.full((64, 64), np.nan, np.float32)
    tilec.compile(rows_scaled_where_positive(), target="cpu")(A, B, F, C)
    np.testing.assert_allclose(C, rows_scaled_where_positive_reference(A, B, F), rtol=1e-5, atol=1e-5)


@pytest.mark.gpu
def test_gpu_rows_scaled_where_their_test_holds_match_numpy(rng):
    torch = pytest.importorskip("torch")
    A, B = rand((64, 32), "float16", rng), rand((64, 32), "float16", rng)
    F = rng.standard_normal(64).astype(np.float32)
    C = torch.full((64, 64), float("nan"), device="cuda")
    tilec.compile(rows_scaled_where_positive(), target="cuda", pass_configs={"tilec.wgmma": False})(
        *(torch.from_numpy(x).cuda() for x in (A, B, F)), C)
    np.testing.assert_allclose(C.cpu().numpy(), rows_scaled_where_positive_reference(A, B, F), rtol=1e-3, atol=1e-3)


def fp8_bytes_dequantized(rows=64, cols=64, offset=0):
    # Each thread loads its row's FP8 bytes (row rows - 1 - tx: none, zeros, for odd rows) into a
    # local array at `offset`, 16 at a time, then writes them times 2 as floats.
    @T.prim_func
    def main(A: T.Tensor((rows, cols), "uint8"), B: T.Tensor((rows, cols), "float32")):
        with T.Kernel(1, threads=rows) as bx:
            tx = T.get_thread_binding()
            raw = T.alloc_local((cols + 16,), "uint8")
            row = rows - 1 - tx
            for c in T.unroll(cols // 16):
                for e in T.vectorized(16):
                    raw[offset + c * 16 + e] = T.if_then_else(row % 2 == 0, A[row, c * 16 + e], 0)
            for c in T.unroll(cols // 16):
                for e in T.vectorized(16):
                    B[row, c * 16 + e] = T.Cast("float32", T.reinterpret(raw[offset + c * 16 + e], "float8_e4m3")) * 2

    return main


def fp8_bytes_dequantized_reference(A):
    values = A.view(ml_dtypes.float8_e4m3fn).astype(np.float32) * 2
    values[1::2] = 0
    return values


@pytest.mark.parametrize("offset", [0, 16, 8])
def test_a_vector_load_fills_a_local_array_itself_where_aligned(offset):
    # At a multiple of 16 bytes the load goes straight into the array (then read a pair of bytes
    # at a time); 8 bytes in, each element is copied from a run of its own.
    source = cuda_compile(fp8_bytes_dequantized(offset=offset)).get_kernel_source()
    assert "alignas(16) uint8_t raw[80];" in source
    direct = re.search(r"load_vector_or_zero<16>\(\(&raw\[", source) is not None
    assert direct == (offset % 16 == 0), source
    assert ("raw[" in source and "A_run[u" in source) == (offset % 16 != 0), source


@pytest.mark.parametrize("offset", [0, 8])
def test_fp8_bytes_filled_into_a_local_array_on_the_cpu(offset, rng):
    A = rng.integers(0, 256, size=(64, 64), dtype=np.uint8)
    A[(A & 0x7F) == 0x7F] = 0  # no NaNs
    B = np.full((64, 64), np.nan, np.float32)
    tilec.compile(fp8_bytes_dequantized(offset=offset), target="cpu")(A, B)
    np.testing.assert_array_equal(B, fp8_bytes_dequantized_reference(A))


@pytest.mark.gpu
@pytest.mark.parametrize("offset", [0, 8])
def test_gpu_fp8_bytes_filled_into_a_local_array_match_numpy(offset, rng):
    torch = pytest.importorskip("torch")
    A = rng.integers(0, 256, size=(64, 64), dtype=np.uint8)
    A[(A & 0x7F) == 0x7F] = 0
    B = torch.full((64, 64), float("nan"), device="cuda")
    tilec.compile(fp8_bytes_dequantized(offset=offset), target="cuda")(torch.from_numpy(A).cuda(), B)
    np.testing.assert_array_equal(B.cpu().numpy(), fp8_bytes_dequantized_reference(A))


def fp8_rows_scaled(rows=64, cols=128, out="bfloat16"):
    # FP8 bytes (uint8) times a row's scale, out as bfloat16 or half: an FP8 cache's dequantization.
    @T.prim_func
    def main(A: T.Tensor((rows, cols), "uint8"), S: T.Tensor((rows,), "float32"), B: T.Tensor((rows, cols), out)):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((rows, cols), "uint8")
            T.copy(A, A_s)
            for i, j in T.Parallel(rows, cols):
                B[i, j] = T.Cast("float32", T.reinterpret(A_s[i, j], "float8_e4m3")) * S[i]

    return main


@pytest.mark.parametrize("out", ["bfloat16", "float16"])
def test_a_vector_of_narrow_floats_converts_two_at_a_time(out):
    source = cuda_compile(fp8_rows_scaled(out=out)).get_kernel_source()
    # two FP8 values to floats in one conversion, two floats to the store's type in another
    assert re.search(r"e4m3_pair_to_float\(\(&A_s_run_pair\[0\]\), \(&A_s_run\[p \* 2\]\)\)", source)
    assert "from_float_pair((&B_run[p * 2])" in source
    assert "from_float<" not in source.split("A_s_run_pair")[1]


def fp8_bytes(rng, shape):
    # random e4m3 bit patterns, NaN's two left out
    data = rng.integers(0, 256, size=shape, dtype=np.uint8)
    return np.where((data & 0x7F) == 0x7F, 0x3C, data).astype(np.uint8)


def test_fp8_rows_scaled_on_the_cpu(rng):
    A, S = fp8_bytes(rng, (64, 128)), rand((64,), "float32", rng)
    B = np.full((64, 128), np.nan, ml_dtypes.bfloat16)
    tilec.compile(fp8_rows_scaled(), target="cpu")(A, S, B)
    expected = (A.view(ml_dtypes.float8_e4m3fn).astype(np.float32) * S[:, None]).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(B.astype(np.float32), expected.astype(np.float32))


@pytest.mark.gpu
@pytest.mark.parametrize("out", ["bfloat16", "float16"])
def test_gpu_narrow_floats_converted_two_at_a_time_round_as_torch_does(out, rng):
    torch = pytest.importorskip("torch")
    A = torch.from_numpy(fp8_bytes(rng, (64, 128))).cuda()
    S = torch.rand(64, device="cuda") + 0.5
    B = torch.full((64, 128), float("nan"), device="cuda", dtype=getattr(torch, out))
    tilec.compile(fp8_rows_scaled(out=out), target="cuda")(A, S, B)
    expected = (A.view(torch.float8_e4m3fn).float() * S[:, None]).to(B.dtype)
    torch.testing.assert_close(B, expected, rtol=0, atol=0)


def fp8_rows_scaled_by_bfloat16(rows=64, cols=1024):
    # FP8 bytes times a row's bfloat16 scale, out as bfloat16, a row at a time: the FP8 cache's
    # dequantization as the DSA decode writes it (the scale rounded to bfloat16, as FlashMLA's is)
    @T.prim_func
    def main(A: T.Tensor((rows, cols), "uint8"), S: T.Tensor((rows,), "bfloat16"),
             B: T.Tensor((rows, cols), "bfloat16")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((rows, cols), "uint8")
            T.copy(A, A_s)
            for i in T.serial(rows):
                for j in T.Parallel(cols):
                    B[i, j] = T.Cast("float32", T.reinterpret(A_s[i, j], "float8_e4m3")) * T.Cast("float32", S[i])

    return main


def every_e4m3_times_scales():
    """Each row every e4m3 code but NaN's two (subnormals and zeros of both signs included), by
    scales: powers of two from 2^-133 (a bfloat16 subnormal) to 2^7, others, large ones,
    negative ones; and the exact product rounded to bfloat16 once (an e4m3 times a bfloat16 is
    exact in float32)."""
    codes = np.array([c for c in range(256) if c & 0x7F != 0x7F] + [0x00, 0x80], np.uint8)
    scales = [2.0 ** k for k in (-133, -126, -60, -9, -1, 0, 3, 7)] + [1.5, 255.0, -0.375, 3e-5, 256.0, 1e4, -3e7]
    scales += [2.0 ** -(k + 1) for k in range(64 - len(scales))]
    A = np.tile(codes, (64, 4))
    S = np.array(scales, np.float32).astype(ml_dtypes.bfloat16)
    expected = (A.view(ml_dtypes.float8_e4m3fn).astype(np.float32) * S.astype(np.float32)[:, None]).astype(
        ml_dtypes.bfloat16)
    return A, S, expected


def test_fp8_times_a_bfloat16_scale_goes_four_bytes_at_a_time():
    # each 4 bytes two permutes, and each pair a shift, a mask and two bf16x2 multiplies
    source = cuda_compile(fp8_rows_scaled_by_bfloat16()).get_kernel_source()
    assert re.search(r"tilec_cuda::e4m3_quad_times\(\(&B_run\[q \* 4\]\), \(&A_s_run\[q \* 4\]\), S\[i\]\)",
                     source), source
    assert "e4m3_pair_to_float" not in source


def test_every_fp8_code_times_bfloat16_scales_on_the_cpu():
    A, S, expected = every_e4m3_times_scales()
    B = np.full(A.shape, np.nan, ml_dtypes.bfloat16)
    tilec.compile(fp8_rows_scaled_by_bfloat16(), target="cpu")(A, S, B)
    np.testing.assert_array_equal(B.view(np.uint16), expected.view(np.uint16))


@pytest.mark.gpu
def test_gpu_every_fp8_code_times_bfloat16_scales_is_the_product_rounded_once():
    torch = pytest.importorskip("torch")
    A, S, expected = every_e4m3_times_scales()
    B = torch.full(A.shape, float("nan"), device="cuda", dtype=torch.bfloat16)
    tilec.compile(fp8_rows_scaled_by_bfloat16(), target="cuda")(
        torch.from_numpy(A).cuda(), torch.from_numpy(S.view(np.uint16).astype(np.int16)).cuda().view(torch.bfloat16), B)
    got = B.cpu().view(torch.int16).numpy().view(np.uint16)
    wrong = np.argwhere(got != expected.view(np.uint16))
    assert wrong.size == 0, [(S[r].item(), hex(A[r, c]), hex(got[r, c]), hex(expected.view(np.uint16)[r, c]))
                             for r, c in wrong[:10]]


def test_general_variant_does_not_assume_aligned_tensors():
    kernel = tilec.compile(scale_rows(), target="cuda", arch=ARCH,
                           pass_configs={"tilec.specialize_contiguous": False})
    assert "load_vector" not in kernel.get_kernel_source()


def test_layout_conflict_names_both_statements():
    @T.prim_func
    def transpose_sum(A: T.Tensor((64, 64), "bfloat16"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 64), "bfloat16")
            P = T.alloc_fragment((64, 64), "float32")
            Q = T.alloc_fragment((64, 64), "float32")
            T.copy(A, A_s)
            T.gemm(A_s, A_s, P, clear_accum=True)
            T.gemm(A_s, A_s, Q, clear_accum=True)
            for i, j in T.Parallel(64, 64):
                P[i, j] = P[i, j] + Q[j, i]
            T.copy(P, C)

    with pytest.raises(tilec.CompileError) as info:
        cuda_compile(transpose_sum)
    message = str(info.value)
    assert "layout conflict for fragment 'Q'" in message
    # The error is at the loop that needs another layout; the note at the gemm that gave it.
    assert "for i, j in T.Parallel(64, 64):" in message
    assert "'Q' got its layout here" in message
    assert "T.gemm(A_s, A_s, Q, clear_accum=True)" in message


def test_spread_fragment_in_scalar_code_is_an_error():
    @T.prim_func
    def first(A: T.Tensor((32, 32), "bfloat16"), out: T.Tensor((1,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((32, 32), "bfloat16")
            acc = T.alloc_fragment((32, 32), "float32")
            T.copy(A, A_s)
            T.gemm(A_s, A_s, acc, clear_accum=True)
            out[0] = acc[0, 0]

    with pytest.raises(tilec.CompileError, match="fragment 'acc' is used outside a T.Parallel loop"):
        cuda_compile(first)


def test_local_buffers_are_whole_on_every_thread():
    @T.prim_func
    def fill(out: T.Tensor((128, 4), "float32")):
        with T.Kernel(1, threads=128) as bx:
            v = T.alloc_local((4,), "float32")
            T.fill(v, 3.0)
            for i in T.Parallel(128):
                for j in T.serial(4):
                    out[i, j] = v[j]

    ir = cuda_compile(fill).get_ir()
    # The fill runs all 4 elements on each thread, not a quarter of them.
    assert "for s in T.unroll(4):" in ir or "T.unroll(4)" in ir, ir


def test_lowered_ir_is_per_thread():
    ir = cuda_compile(matmul(128, 128, 128, "bfloat16")).get_ir()
    assert "# per thread tx" in ir


def policy_matmul(policy):
    @T.prim_func
    def main(A: T.Tensor((64, 32), "bfloat16"), B: T.Tensor((32, 64), "bfloat16"),
             C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 32), "bfloat16")
            B_s = T.alloc_shared((32, 64), "bfloat16")
            C_f = T.alloc_fragment((64, 64), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.gemm(A_s, B_s, C_f, clear_accum=True, policy=policy)
            T.copy(C_f, C)

    return main


@pytest.mark.parametrize("policy,grid", [(None, "2, 2"), (T.GemmWarpPolicy.Square, "2, 2"),
                                         (T.GemmWarpPolicy.FullRow, "4, 1"),
                                         (T.GemmWarpPolicy.FullCol, "1, 4"), ("FullRow", "4, 1")])
def test_gemm_warp_policy_picks_the_warp_grid(policy, grid):
    kernel = cuda_compile(policy_matmul(policy))
    assert f"tilec_cuda::gemm_ss<64, 64, 32, {grid}, false, false, true, true>" in kernel.get_kernel_source()
    if policy not in (None, "Square"):
        assert f"policy=T.GemmWarpPolicy.{policy}" in kernel.get_tile_ir()


def test_unknown_gemm_warp_policy_is_an_error():
    with pytest.raises(tilec.CompileError, match="policy is T.GemmWarpPolicy.Square, .FullRow or .FullCol"):
        cuda_compile(policy_matmul("Diagonal"))


def tilelang_positional_matmul(k_pack=1, wg_wait=0, mbar=None):
    # TileLang's T.gemm order: policy before clear_accum, then k_pack, wg_wait, mbar.
    @T.prim_func
    def main(A: T.Tensor((64, 32), "bfloat16"), B: T.Tensor((32, 64), "bfloat16"),
             C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 32), "bfloat16")
            B_s = T.alloc_shared((32, 64), "bfloat16")
            C_f = T.alloc_fragment((64, 64), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.gemm(A_s, B_s, C_f, False, False, T.GemmWarpPolicy.FullRow, True, k_pack, wg_wait, mbar)
            T.wait_wgmma(0)
            T.copy(C_f, C)

    return main


def test_gemm_takes_tilelang_positional_arguments():
    kernel = cuda_compile(tilelang_positional_matmul(k_pack=2, wg_wait=-1))
    assert "tilec_cuda::gemm_ss<64, 64, 32, 4, 1, false, false, true, true>" in kernel.get_kernel_source()
    assert "clear_accum=True, policy=T.GemmWarpPolicy.FullRow" in kernel.get_tile_ir()


@pytest.mark.parametrize("args,message", [
    (dict(k_pack=3), "T.gemm: k_pack is 1 or 2, not 3"),
    (dict(wg_wait=-2), "T.gemm: wg_wait is -1 \\(no wait\\) or a count of wgmma groups left in flight"),
    (dict(mbar=1), "T.gemm\\(mbar=...\\) is Blackwell's tcgen05 form"),
])
def test_gemm_arguments_tilec_cannot_honour_are_errors(args, message):
    with pytest.raises(tilec.CompileError, match=message):
        cuda_compile(tilelang_positional_matmul(**args))


@T.prim_func
def eight_row_matmul(A: T.Tensor((8, 32), "float16"), B: T.Tensor((32, 64), "float16"),
                     C: T.Tensor((8, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((8, 32), "float16")
        B_s = T.alloc_shared((32, 64), "float16")
        C_f = T.alloc_fragment((8, 64), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.gemm(A_s, B_s, C_f, clear_accum=True)
        T.copy(C_f, C)


def test_a_16_bit_gemm_off_the_tensor_cores_is_a_warning(capfd):
    # mma.sync's pieces are 16 rows: an 8-row tile runs on scalar FMA, many times slower.
    cuda_compile(eight_row_matmul)
    err = capfd.readouterr().err
    assert "T.gemm runs on CUDA cores (scalar FMA), not tensor cores: no grid of the block's 4 warps" in err
    assert "test_cuda_lowering.py:" in err


def a_in_registers_matmul(policy=None, dtype="bfloat16"):
    @T.prim_func
    def main(A: T.Tensor((64, 32), dtype), B: T.Tensor((64, 32), dtype), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 32), dtype)
            A_f = T.alloc_fragment((64, 32), dtype)
            B_s = T.alloc_shared((64, 32), dtype)
            C_f = T.alloc_fragment((64, 64), "float32")
            T.copy(A, A_s)
            T.copy(A_s, A_f)
            T.copy(B, B_s)
            T.gemm(A_f, B_s, C_f, transpose_B=True, clear_accum=True, policy=policy)
            T.copy(C_f, C)

    return main


def test_gemm_with_a_in_registers_splits_m_and_loads_a_with_ldmatrix():
    source = cuda_compile(a_in_registers_matmul()).get_kernel_source()
    assert "tilec_cuda::gemm_rs<64, 64, 32, 4, true, true>((&A_f[0])" in source
    assert "tilec_cuda::ldmatrix_accumulator<64, 32, 4, 1, false>((&A_f[0]), (&A_s[0]), tx);" in source
    # Each warp holds its 16 rows of A: 16 x 32 / 32 lanes.
    assert "tilec_cuda::bfloat16 A_f[16];" in source


def test_gemm_with_b_in_registers_splits_n():
    kernel = matmul_operand_in_registers.__wrapped__(128, 128, 32, "float16", "B", trans_A=False, trans_B=True,
                                                     via_shared=False)
    source = cuda_compile(kernel).get_kernel_source()
    assert "tilec_cuda::gemm_sr<64, 64, 32, 4, false, true>((&A_s[" in source and "(&B_f[0])" in source


def test_gemm_with_a_in_registers_keeps_whole_rows_on_each_warp():
    # FullCol over 4 warps would need every warp to hold all of A: one warp splits it, the
    # others repeat it.
    source = cuda_compile(a_in_registers_matmul(policy=T.GemmWarpPolicy.FullCol)).get_kernel_source()
    assert "tilec_cuda::gemm_rs<64, 64, 32, 1, true, true>" in source
    # float32 A in registers has no mma register layout in common with an accumulator.
    source = cuda_compile(a_in_registers_matmul(dtype="float32")).get_kernel_source()
    assert "gemm_rs" not in source and "ldmatrix_accumulator" not in source


def test_use_swizzle_rasterizes_the_block_indices():
    source = cuda_compile(matmul_rasterized.__wrapped__(256, 256, 64, 4, "row")).get_kernel_source()
    assert "const tilec_cuda::block_index block = tilec_cuda::rasterized_block<4, false>();" in source
    assert "const int32_t bx = static_cast<int32_t>(block.x);" in source
    source = cuda_compile(matmul_rasterized.__wrapped__(256, 256, 64, 2, "col")).get_kernel_source()
    assert "rasterized_block<2, true>" in source
    # A 3-D grid: x and y rasterized, z as launched; a 1-D grid needs no reordering.
    source = cuda_compile(batched_matmul_rasterized.__wrapped__(2, 256, 256, 64, 4)).get_kernel_source()
    assert "rasterized_block<4, false>();" in source
    assert "const int32_t bz = static_cast<int32_t>(block.z);" in source
    assert "rasterized_block" not in cuda_compile(rows_rasterized.__wrapped__(1000)).get_kernel_source()


def test_block_of_partial_warps_is_an_error():
    @T.prim_func
    def ragged(A: T.Tensor((100,), "float32")):
        with T.Kernel(1, threads=100) as bx:
            for i in T.Parallel(100):
                A[i] = 1.0

    with pytest.raises(tilec.CompileError, match="threads must be a multiple of 32"):
        cuda_compile(ragged)


def test_shared_memory_over_the_arch_limit_is_an_error():
    @T.prim_func
    def huge(A: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            s = T.alloc_shared((64 * 1024,), "float32")
            T.copy(A, s[0:128])
            T.copy(s[0:128], A)

    with pytest.raises(tilec.CompileError, match=r"shared memory \(262144 bytes\) exceeds the 232448 bytes"):
        cuda_compile(huge)


def test_symbolic_shared_buffer_is_an_error():
    m = T.symbolic("m")

    @T.prim_func
    def sized(A: T.Tensor((m,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            s = T.alloc_shared((m,), "float32")
            T.copy(A, s)
            T.copy(s, A)

    with pytest.raises(tilec.CompileError, match="'s' needs a constant shape on the GPU"):
        cuda_compile(sized)


def scan_section(source):
    """The code of a kernel's T.cumsum: from its source-line comment to the next one."""
    start = source.index("T.cumsum(")
    return source[start:source.index("// ", start)]


def test_a_shared_scan_runs_each_line_on_one_thread_between_barriers():
    # 64 rows in place over 128 threads: a row a thread, and the 64 threads that would repeat
    # a row sit out (running, they would read what the others already summed).
    source = cuda_compile(cumsum_kernel.__wrapped__(64, 64, 1, False, "shared", True)).get_kernel_source()
    scan = scan_section(source)
    assert scan.count("tilec_cuda::sync_threads();") == 1 and "if (tx < 64) {" in scan, scan
    assert "#pragma unroll" in scan and "for (int32_t i1 = 0; i1 < 64; ++i1)" in scan, scan
    after = source[source.index("T.cumsum("):]
    assert after.index("tilec_cuda::sync_threads();", len(scan)) < after.index("T.copy(S, B)") + 200


def test_a_fragment_scan_stays_in_each_threads_registers():
    # Each thread holds whole rows (the scan's layout constraint): no shared memory, no
    # barrier, every replica of a row updating its own registers.
    source = cuda_compile(cumsum_kernel.__wrapped__(64, 64, 1, True, "fragment", True)).get_kernel_source()
    scan = scan_section(source)
    assert "float S[64];" in source
    assert "sync_threads" not in scan and "tilec_shared" not in scan and "if (tx" not in scan, scan
    assert "S[((63 - r) & 63)] = S[((64 - r) & 63)] + S[((63 - r) & 63)];" in scan, scan


@pytest.mark.gpu
@pytest.mark.skipif(not _core.cuda_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("scope", ["shared", "fragment", "shared_into_fragment"])
@pytest.mark.parametrize("M,N,dim,reverse", [(64, 64, 1, False), (64, 64, 0, True), (256, 8, 0, False),
                                             (1, 128, 1, True), (48, 61, 1, True), (130, 3, 1, False)])
@pytest.mark.parametrize("in_place", [False, True])
def test_gpu_cumsum_matches_torch(scope, M, N, dim, reverse, in_place):
    # Fewer lines than threads (replicas sit out or keep their own registers), more lines
    # than threads (a thread scans several), one line, lines not a power of two.
    torch = pytest.importorskip("torch")
    if in_place and scope == "shared_into_fragment":
        pytest.skip("in place has one buffer")
    kernel = tilec.compile(cumsum_kernel.__wrapped__(M, N, dim, reverse, scope, in_place), target="cuda")
    a = torch.randn(M, N, device="cuda")
    b = torch.full_like(a, float("nan"))
    kernel(a, b)
    x = a.double().flip(dim) if reverse else a.double()
    expected = x.cumsum(dim).flip(dim) if reverse else x.cumsum(dim)
    torch.testing.assert_close(b.double(), expected, rtol=1e-5, atol=1e-4)


# --- kernels written thread by thread (docs/language.md, "Thread by thread") ---------------

def atomics_per_thread_and_once(n):
    @T.prim_func
    def main(X: T.Tensor((n,), "float32"), S: T.Tensor((2,), "float32")):
        with T.Kernel(1, threads=n) as bx:
            tx = T.get_thread_binding()
            T.atomic_add(S[0], X[tx])  # each thread's own value: every thread adds it
            T.atomic_add(S[1], 1.0)    # the block's one update: once

    return main


def test_a_scalar_atomic_of_a_thread_value_is_made_by_every_thread():
    source = cuda_compile(atomics_per_thread_and_once(128)).get_kernel_source()
    body = source[source.index("T.atomic_add(S[0]"):]
    per_thread = body[:body.index("T.atomic_add(S[1]")]
    once = body[body.index("T.atomic_add(S[1]"):]
    assert "atomic_add(&S[0], X[tx])" in per_thread and "if (tx == 0)" not in per_thread, per_thread
    assert "if (tx == 0)" in once, once


# A pipelined gemm whose loads would be TMA loads in a warp-specialized loop: it reads the
# thread index when asked, and its first copy takes T.copy's keywords.
def pipelined_gemm(read_thread_index=False, disable_tma=False, prefer_instruction=None):
    @T.prim_func
    def main(A: T.Tensor((256, 256), "float16"), B: T.Tensor((256, 256), "float16"),
             C: T.Tensor((256, 256), "float32"), D: T.Tensor((256,), "float32")):
        with T.Kernel(2, 2, threads=256) as (bx, by):
            A_s = T.alloc_shared((128, 64), "float16")
            B_s = T.alloc_shared((64, 128), "float16")
            C_f = T.alloc_fragment((128, 128), "float32")
            T.clear(C_f)
            for k in T.Pipelined(4, num_stages=3):
                T.copy(A[by * 128, k * 64], A_s, disable_tma=disable_tma, prefer_instruction=prefer_instruction)
                T.copy(B[k * 64, bx * 128], B_s, coalesced_width=8, eviction_policy="evict_last")
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[by * 128, bx * 128])
            if read_thread_index:
                D[T.get_thread_binding()] = 1.0

    return main


@pytest.mark.parametrize("read_it", [False, True])
def test_a_kernel_reading_the_thread_index_is_not_warp_specialized(read_it):
    source = tilec.compile(pipelined_gemm(read_thread_index=read_it), target="cuda", arch=ARCH).get_kernel_source()
    assert ("__launch_bounds__(384)" in source) == (not read_it), source[:600]


# --- T.copy's keywords: what the user lets a copy run on --------------------------------------

@pytest.mark.parametrize("keywords,tma,cp_async", [
    ({}, True, False),
    ({"disable_tma": True}, False, True),
    ({"prefer_instruction": "cp_async"}, False, True),
    ({"prefer_instruction": "sync"}, False, True),  # B's copy still takes cp.async
    ({"prefer_instruction": "tma"}, True, False),
])
def test_copy_keywords_choose_what_a_copy_runs_on(keywords, tma, cp_async):
    kernel = tilec.compile(pipelined_gemm(**keywords), target="cuda", arch=ARCH)
    source = kernel.get_kernel_source()
    assert ("tma_load" in source) == tma, source[source.index("__global__"):][:3000]
    assert ("cp_async" in source) == cp_async
    if keywords.get("prefer_instruction") == "sync":
        # The code under A's copy (up to the next source line's comment) has no cp.async.
        after = source[source.index("T.copy(A[by * 128, k * 64], A_s, disable_tma"):]
        a_copy = after[after.index("\n"):after.index("// ", after.index("\n"))]
        assert "cp_async" not in a_copy, a_copy


def relu_into_register_gemm(dtype, form="max", M=128, N=64, K=64):
    # S = A B^T; R = ReLU(S) in `dtype` (a 16-bit fragment, the A of a gemm from registers), as
    # max(S, 0) (form "max") or S < 0 ? 0 : S ("select", NaN stays NaN); D = R W^T: a ReLU'd
    # score's weighted sum on the tensor cores, as the DSA indexer's head sum.
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), W: T.Tensor((8, N), dtype),
             S: T.Tensor((M, N), "float32"), R: T.Tensor((M, N), dtype), D: T.Tensor((M, 8), "float32")):
        with T.Kernel(1, threads=128):
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared((N, K), "float16")
            W_s = T.alloc_shared((8, N), dtype)
            S_f = T.alloc_fragment((M, N), "float32")
            R_f = T.alloc_fragment((M, N), dtype)
            D_f = T.alloc_fragment((M, 8), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.copy(W, W_s)
            T.gemm(A_s, B_s, S_f, transpose_B=True, clear_accum=True)
            for i, j in T.Parallel(M, N):
                if form == "max":
                    R_f[i, j] = T.max(S_f[i, j], 0)
                else:
                    R_f[i, j] = T.if_then_else(S_f[i, j] < 0, 0, S_f[i, j])
            T.gemm(R_f, W_s, D_f, transpose_B=True, clear_accum=True)
            T.copy(S_f, S)
            T.copy(R_f, R)
            T.copy(D_f, D)

    return main


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("form,call", [("max", "from_float_pair_max"), ("select", "from_float_pair_relu")])
def test_a_relu_into_a_16_bit_fragment_converts_two_slots_at_once(dtype, form, call):
    # On Hopper (wgmma, R from registers): each pair of R's slots is one conversion of two floats
    # and one max of the pair (from_float_pair_max), or one conversion that clamps negatives
    # (from_float_pair_relu), not a max or a select a float and then the conversion.
    with skip_without_nvrtc():
        source = tilec.compile(relu_into_register_gemm(dtype, form), target="cuda", arch=ARCH).get_kernel_source()
    assert "wgmma_gemm_rs<" in source
    assert re.search(r"for \(int32_t (p\w*) = 0; \1 < 32; \+\+\1\) \{\s*//[^\n]*\n\s*"
                     rf"tilec_cuda::{call}\(\(&R_f\[", source), source
    assert "tilec_cuda::max(S_f" not in source and "< 0x0p+0f ?" not in source


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("form", ["max", "select"])
def test_gpu_a_relu_into_a_16_bit_fragment_is_the_rounded_relu(dtype, form, rng):
    # R is ReLU(S) rounded. A NaN in A makes a row of S NaN: T.max gives the other operand, 0 (so
    # does the pair's max after its conversion), the select NaN (so does the clamping
    # conversion); -inf in A gives a row of -inf and NaN.
    torch = pytest.importorskip("torch")
    torch_dtype = getattr(torch, dtype)
    A = torch.randn(128, 64, dtype=torch.float16)
    A[3, 5], A[9, 0] = float("nan"), float("-inf")
    B, W = torch.randn(64, 64, dtype=torch.float16), torch.randn(8, 64).to(torch_dtype)
    S = torch.full((128, 64), float("nan"), device="cuda")
    R = torch.full((128, 64), float("nan"), device="cuda", dtype=torch_dtype)
    D = torch.full((128, 8), float("nan"), device="cuda")
    tilec.compile(relu_into_register_gemm(dtype, form), target="cuda")(A.cuda(), B.cuda(), W.cuda(), S, R, D)
    S, R, D = S.cpu(), R.cpu(), D.cpu()
    assert torch.isnan(S[3]).all() and torch.isinf(S[9]).any()
    expected = torch.where(torch.isnan(S), 0.0 if form == "max" else float("nan"), S.clamp(min=0)).to(torch_dtype)
    torch.testing.assert_close(R, expected, rtol=0, atol=0, equal_nan=True)
    finite = torch.isfinite(R.double() @ W.double().T).all(dim=1)
    assert finite.sum() >= 126
    reference = R[finite].double() @ W.double().T
    assert (D[finite].double() - reference).abs().max() <= 1e-5 * reference.abs().max()

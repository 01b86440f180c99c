"""The Hopper GEMM path (sm_90a): T.gemm on wgmma, T.Pipelined copies on TMA, a warp-specialized
producer warpgroup with setmaxnreg, persistent blocks, a stmatrix + TMA-store epilogue, each turned
off by its pass config. The generated code is
checked with NVRTC alone (no GPU); results are checked on an H100/H200 where there is one."""

import re

import pytest

import tilec
import tilec.language as T

ARCH = "sm_90a"
LADDER = {
    "mma.sync": {"tilec.wgmma": False},
    "wgmma": {"tilec.tma": False},
    "tma": {"tilec.warp_specialize": False},
    "warp_specialized": {"tilec.setmaxnreg": False, "tilec.persistent": False},
    "setmaxnreg": {"tilec.persistent": False},
    "persistent": {},
}


def matmul(M, N, K, bM=128, bN=256, bK=64, stages=3, threads=256, dtype="bfloat16", trans_b=False,
           shared_epilogue=False, panel=0):
    b_shape = (N, K) if trans_b else (K, N)

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor(b_shape, dtype), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=threads) as (bx, by):
            if panel:
                T.use_swizzle(panel)
            A_s = T.alloc_shared((bM, bK), dtype)
            B_s = T.alloc_shared(((bN, bK) if trans_b else (bK, bN)), dtype)
            C_l = T.alloc_fragment((bM, bN), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bK), num_stages=stages):
                T.copy(A[by * bM, k * bK], A_s)
                if trans_b:
                    T.copy(B[bx * bN, k * bK], B_s)
                else:
                    T.copy(B[k * bK, bx * bN], B_s)
                T.gemm(A_s, B_s, C_l, transpose_B=trans_b)
            if shared_epilogue:
                C_s = T.alloc_shared((bM, bN), "bfloat16")
                T.copy(C_l, C_s)
                T.copy(C_s, C[by * bM, bx * bN])
            else:
                T.copy(C_l, C[by * bM, bx * bN])

    return main


def compile_or_skip(func, **kw):
    try:
        return tilec.compile(func, **kw)
    except RuntimeError as e:
        if str(e).startswith("cannot compile CUDA kernels:"):
            pytest.skip(str(e))
        raise


# --- no GPU needed: the source NVRTC built for sm_90a -----------------------------------

@pytest.mark.parametrize("step", list(LADDER))
def test_each_technique_shows_in_the_source_and_its_config_turns_it_off(step):
    kernel = compile_or_skip(matmul(512, 512, 512), target="cuda", arch=ARCH, pass_configs=LADDER[step])
    src = kernel.get_kernel_source()
    order = list(LADDER)
    on = lambda technique: order.index(step) >= order.index(technique)  # noqa: E731
    assert ("wgmma_gemm_ss<128, 256, 64, 2, 1, false, false>" in src) == on("wgmma")
    assert ("gemm_ss<" in src and not on("wgmma")) or on("wgmma")
    assert ("tma_load(" in src and "__grid_constant__" in src) == on("tma")
    assert ("__launch_bounds__(384)" in src and "mbarrier_arrive_per_warp" in src) == on("warp_specialized")
    assert ("setmaxnreg_dec<40>" in src) == on("setmaxnreg")
    assert ("persistent_first()" in src and "tile_iter" in src) == on("persistent")
    assert ("cp_async_16" in src) == (not on("tma"))


def test_unknown_or_malformed_hopper_pass_configs_are_errors():
    with pytest.raises(ValueError, match="tilec.wgmma.*is a switch"):
        tilec.compile(matmul(128, 256, 64), target="cuda", arch=ARCH, pass_configs={"tilec.wgmma": "maybe"})


def test_fp8_gemm_runs_on_qgmma_k32_with_both_operands_k_major():
    kernel = compile_or_skip(matmul(512, 512, 512, bK=128, dtype="float8_e4m3", trans_b=True),
                             target="cuda", arch=ARCH)
    src = kernel.get_kernel_source()
    assert "wgmma_gemm_ss<128, 256, 128, 2, 1, false, true>" in src and "tma_load(" in src


def test_tiles_whose_rows_are_not_128_bytes_stay_on_mma_sync():
    # bK = 32 bf16 is 64-byte rows: no panel layout, so neither TMA nor wgmma.
    src = compile_or_skip(matmul(512, 512, 512, bK=32), target="cuda", arch=ARCH).get_kernel_source()
    # (The source's "// Target:" line names the arch's features, wgmma among them.)
    assert "wgmma_gemm" not in src and "tma_load" not in src and "gemm_ss<" in src


def test_a_shared_epilogue_in_the_consumers_synchronizes_them_only():
    src = compile_or_skip(matmul(512, 512, 512, shared_epilogue=True), target="cuda",
                          arch=ARCH).get_kernel_source()
    consumers = src[src.index("setmaxnreg_inc"):]
    assert "sync_threads_partial<1, 256>" in consumers and "sync_threads()" not in consumers


EPILOGUES = {
    "tma_store": {},
    "no_tma_store": {"tilec.tma_store": False},
    "not_persistent": {"tilec.persistent": False},
    "no_tma": {"tilec.tma": False},
}


@pytest.mark.parametrize("configs", list(EPILOGUES))
def test_a_shared_epilogue_stores_with_stmatrix_and_tma(configs):
    kernel = compile_or_skip(matmul(512, 512, 512, shared_epilogue=True), target="cuda", arch=ARCH,
                             pass_configs=EPILOGUES[configs])
    src = kernel.get_kernel_source()
    tma_store = configs in ("tma_store", "not_persistent")
    assert ("stmatrix_accumulator<128, 256, 2, 1>" in src) == tma_store
    assert (src.count("tma_store(") == 4 and "tma_store_commit_and_wait_read" in src) == tma_store
    if tma_store:
        # The consumers' stmatrix writes reach the async proxy before thread 0 stores them.
        store = src[src.index("stmatrix_accumulator"):]
        assert store.index("fence_proxy_async") < store.index("sync_threads_partial") < store.index("tma_store(")


def test_persistent_blocks_keep_the_stage_buffers_apart_from_the_epilogue_tile():
    # 4 stages (192 KiB) and a 64 KiB C tile fit only when the C tile reuses the stage buffers,
    # which a persistent block's producer is still filling: the kernel stays non-persistent.
    src4 = compile_or_skip(matmul(512, 512, 512, stages=4, shared_epilogue=True), target="cuda",
                           arch=ARCH).get_kernel_source()
    assert "persistent_first" not in src4 and "tma_store(" in src4
    src3 = compile_or_skip(matmul(512, 512, 512, stages=3, shared_epilogue=True), target="cuda",
                           arch=ARCH).get_kernel_source()
    assert "persistent_first" in src3
    offsets = {name: int(off) for name, off in re.findall(r"\* const (\w+) = reinterpret_cast<[^>]*>\(tilec_shared \+ (\d+)\)", src3)}
    c_tile = (offsets["C_s"], offsets["C_s"] + 128 * 256 * 2)
    for name, size in (("A_s", 3 * 128 * 64 * 2), ("B_s", 3 * 64 * 256 * 2)):
        assert offsets[name] + size <= c_tile[0] or c_tile[1] <= offsets[name], (name, offsets)


def test_persistent_blocks_walk_the_tiles_in_the_rasterized_order():
    src = compile_or_skip(matmul(512, 512, 512, panel=8), target="cuda", arch=ARCH).get_kernel_source()
    assert "tile_block_x<8, false>" in src and "rasterized_block" not in src


def test_other_archs_keep_the_ampere_path():
    src = compile_or_skip(matmul(512, 512, 512), target="cuda", arch="sm_80").get_kernel_source()
    assert "wgmma" not in src and "tma_load" not in src


# --- on an H100 / H200 -------------------------------------------------------------------

def hopper_or_skip():
    import torch

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip(f"the Hopper path needs an sm_90 GPU, not {torch.cuda.get_device_name()}")
    return torch


def check(kernel, M, N, K, dtype, trans_b, torch):
    td = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float8_e4m3": torch.float8_e4m3fn}[dtype]
    a = torch.randn(M, K, device="cuda").to(td)
    b = torch.randn(*((N, K) if trans_b else (K, N)), device="cuda").to(td)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel(a, b, c)
    ref = a.double() @ (b.double().t() if trans_b else b.double())
    err = ((c.double() - ref).norm() / ref.norm()).item()
    assert err < 1e-2, f"relative error {err}"


@pytest.mark.gpu
@pytest.mark.parametrize("step", list(LADDER))
@pytest.mark.parametrize("M,N,K", [(1024, 1024, 1024), (1000, 1096, 960), (1000, 1000, 1000)])
def test_each_technique_computes_the_product(step, M, N, K):
    torch = hopper_or_skip()
    # (1000, 1096, 960): ragged M and N tiles (TMA fills zeros past the edge); (1000, 1000,
    # 1000): rows of 2000 bytes, not TMA-able, so wgmma reads cp.async tiles.
    check(tilec.compile(matmul(M, N, K), pass_configs=LADDER[step]), M, N, K, "bfloat16", False, torch)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,trans_b,bK", [("float16", False, 64), ("bfloat16", True, 64),
                                              ("float8_e4m3", True, 128)])
@pytest.mark.parametrize("bM,bN,threads", [(128, 256, 256), (256, 128, 256), (64, 128, 128), (128, 128, 128)])
def test_types_layouts_and_warpgroup_grids(dtype, trans_b, bK, bM, bN, threads):
    torch = hopper_or_skip()
    M, N, K = 1000, 1096, 1024
    kernel = tilec.compile(matmul(M, N, K, bM=bM, bN=bN, bK=bK, threads=threads, dtype=dtype, trans_b=trans_b))
    check(kernel, M, N, K, dtype, trans_b, torch)


@pytest.mark.gpu
@pytest.mark.parametrize("configs", list(EPILOGUES))
@pytest.mark.parametrize("M,N,K,stages", [(1000, 1096, 960, 3), (1000, 1096, 960, 4), (1000, 1000, 1000, 3),
                                          (4096, 4096, 512, 3)])
def test_shared_epilogue_after_a_warp_specialized_loop(configs, M, N, K, stages):
    # Ragged tiles (the TMA store clips them); rows of 2000 bytes (no TMA store: a stored copy);
    # 512 tiles, several a persistent block.
    torch = hopper_or_skip()
    kernel = tilec.compile(matmul(M, N, K, stages=stages, shared_epilogue=True), pass_configs=EPILOGUES[configs])
    check(kernel, M, N, K, "bfloat16", False, torch)


@pytest.mark.gpu
@pytest.mark.parametrize("panel", [0, 8])
@pytest.mark.parametrize("M,N,K", [(4096, 4096, 512), (3000, 5000, 640), (256, 256, 4096)])
def test_persistent_blocks_cover_every_tile_once(panel, M, N, K):
    # More tiles than blocks (the grid wraps), an odd tile count, fewer tiles than SMs.
    torch = hopper_or_skip()
    kernel = tilec.compile(matmul(M, N, K, stages=4, panel=panel))
    assert "persistent_first" in kernel.get_kernel_source()
    check(kernel, M, N, K, "bfloat16", False, torch)


def matmul_register_a(M, N, K, bM=128, bN=128, bK=64, threads=256):
    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=threads) as (bx, by):
            A_f = T.alloc_fragment((bM, bK), "bfloat16")
            B_s = T.alloc_shared((bK, bN), "bfloat16")
            C_l = T.alloc_fragment((bM, bN), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bK), num_stages=3):
                T.copy(A[by * bM, k * bK], A_f)
                T.copy(B[k * bK, bx * bN], B_s)
                T.gemm(A_f, B_s, C_l)
            T.copy(C_l, C[by * bM, bx * bN])

    return main


def test_a_register_operand_runs_on_wgmma_rs():
    src = compile_or_skip(matmul_register_a(512, 512, 512), target="cuda", arch=ARCH).get_kernel_source()
    assert "wgmma_gemm_rs<128, 128, 64, 2, false>" in src and "tma_load(" in src


@pytest.mark.gpu
@pytest.mark.parametrize("M,N,K", [(1024, 1024, 1024), (1000, 1096, 960)])
def test_a_register_operand_computes_the_product(M, N, K):
    torch = hopper_or_skip()
    check(tilec.compile(matmul_register_a(M, N, K)), M, N, K, "bfloat16", False, torch)

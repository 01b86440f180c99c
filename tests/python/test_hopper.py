"""The Hopper GEMM path (sm_90a): T.gemm on wgmma, T.Pipelined copies on TMA, a warp-specialized
producer warpgroup with setmaxnreg, persistent blocks, a stmatrix + TMA-store epilogue, each turned
off by its pass config; shared tiles in 128-, 64-, 32- or 16-byte panels (the TMA swizzle and the
wgmma descriptor mode of that width). The generated code is checked with NVRTC alone (no GPU);
results are checked on an H100/H200 where there is one."""

import pathlib
import re

import pytest

import tilec
import tilec.language as T
from tilec import _core, capture
from tilec.jit import core_pass_configs

from helpers import skip_without_nvrtc

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
           shared_epilogue=False, panel=0, out_dtype="bfloat16", keep_registers=False, min_blocks=0, cluster_dims=1):
    b_shape = (N, K) if trans_b else (K, N)

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor(b_shape, dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=threads, cluster_dims=cluster_dims) as (bx, by):
            if panel:
                T.use_swizzle(panel)
            if keep_registers:
                T.no_set_max_nreg()
            if min_blocks:
                T.annotate_min_blocks_per_sm(min_blocks)
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
                C_s = T.alloc_shared((bM, bN), out_dtype)
                T.copy(C_l, C_s)
                T.copy(C_s, C[by * bM, bx * bN])
            else:
                T.copy(C_l, C[by * bM, bx * bN])

    return main


def compile_or_skip(func, **kw):
    with skip_without_nvrtc():
        return tilec.compile(func, **kw)


def emit(func, stage, pass_configs=None):
    """`tilec compile --emit <stage>` of a prim_func for sm_90a: 'ir', 'source' or 'ptx'."""
    source, filename, first_line, name, bindings = capture.function_value(func.func, func.source, func.scope)
    with skip_without_nvrtc():
        return _core.emit(source, filename, first_line, name, bindings, "cuda", ARCH,
                          core_pass_configs(pass_configs), stage)


# --- no GPU needed: the source NVRTC built for sm_90a -----------------------------------

@pytest.mark.parametrize("step", list(LADDER))
def test_each_technique_shows_in_the_source_and_its_config_turns_it_off(step):
    kernel = compile_or_skip(matmul(512, 512, 512), target="cuda", arch=ARCH, pass_configs=LADDER[step])
    src = kernel.get_kernel_source()
    order = list(LADDER)
    on = lambda technique: order.index(step) >= order.index(technique)  # noqa: E731
    assert ("wgmma_gemm_ss<128, 256, 64, 2, 1, false, false, 128, 128>" in src) == on("wgmma")
    assert ("gemm_ss<" in src and not on("wgmma")) or on("wgmma")
    assert ("tma_load(" in src and "__grid_constant__" in src) == on("tma")
    assert ("__launch_bounds__(384)" in src and "mbarrier_arrive_per_warp" in src) == on("warp_specialized")
    assert ("setmaxnreg_dec<24>" in src) == on("setmaxnreg")
    assert ("persistent_first()" in src and "tile_iter" in src) == on("persistent")
    assert ("cp_async_16" in src) == (not on("tma"))


def test_no_set_max_nreg_keeps_the_registers_of_a_warp_specialized_kernel():
    src = compile_or_skip(matmul(512, 512, 512, keep_registers=True), target="cuda", arch=ARCH).get_kernel_source()
    assert "mbarrier_arrive_per_warp" in src and "setmaxnreg_" not in src
    assert "T.no_set_max_nreg()" in emit(matmul(512, 512, 512, keep_registers=True), "ir")


def test_min_blocks_per_sm_gives_the_consumers_what_that_many_blocks_leave():
    # TileLang's warp-specialized gemm hung at launch with T.annotate_min_blocks_per_sm(2)
    # (tile-ai/tilelang#2559): its consumers grew by one block's registers. Two blocks of one
    # consumer and one producer warpgroup launch with 128 registers a thread; the producer's 24
    # leave the consumer 232. One such block launches with 248 and nothing moves.
    src = compile_or_skip(matmul(512, 512, 512, bM=64, bN=128, threads=128, min_blocks=2), target="cuda",
                          arch=ARCH).get_kernel_source()
    assert "__launch_bounds__(256, 2)" in src
    assert "setmaxnreg_dec<24>" in src and "setmaxnreg_inc<232>" in src
    src = compile_or_skip(matmul(512, 512, 512, bM=64, bN=128, threads=128), target="cuda", arch=ARCH).get_kernel_source()
    assert "__launch_bounds__(256)" in src and "setmaxnreg_" not in src


def test_min_blocks_per_sm_that_leaves_a_wgmma_too_few_registers_is_an_error_at_the_kernel():
    # two blocks of 384 threads: 80 registers a thread, where a wgmma of 64 x 128 needs more
    with pytest.raises(tilec.CompileError, match=r"test_hopper.py:\d+:\d+: error: T.annotate_min_blocks_per_sm\(2\) "
                       r"leaves each of this kernel's 384 threads 80 registers \(64 K over 2 blocks\), fewer than its "
                       r"instructions need \(ptxas: Insufficient registers \(80\)"):
        compile_or_skip(matmul(512, 512, 512, bN=128, min_blocks=2), target="cuda", arch=ARCH)


def test_disable_warp_group_reg_alloc_is_no_set_max_nreg():
    @T.prim_func
    def main(A: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            T.disable_warp_group_reg_alloc()
            for i in T.Parallel(128):
                A[i] = 1.0

    assert "T.no_set_max_nreg()" in emit(main, "ir")


def test_unknown_or_malformed_hopper_pass_configs_are_errors():
    with pytest.raises(ValueError, match="tilec.wgmma.*is a switch"):
        tilec.compile(matmul(128, 256, 64), target="cuda", arch=ARCH, pass_configs={"tilec.wgmma": "maybe"})


def test_fp8_gemm_runs_on_qgmma_k32_with_both_operands_k_major():
    kernel = compile_or_skip(matmul(512, 512, 512, bK=128, dtype="float8_e4m3", trans_b=True),
                             target="cuda", arch=ARCH)
    src = kernel.get_kernel_source()
    assert "wgmma_gemm_ss<128, 256, 128, 2, 1, false, true, 128, 128>" in src and "tma_load(" in src


# (bM, bN, bK, threads, dtype, trans_b): the panel widths of A and B, the wgmma instruction, and
# the TMA boxes (innermost first) with their swizzles. Rows of 128 bytes take 128-byte panels,
# of 64 bytes (bK = 32 at 16 bits) 64-byte ones, and so on; B stored K x N of 8 or 24 columns
# (16-byte multiples that no wider panel divides) takes unswizzled 16-byte panels.
PANEL_SHAPES = {
    "bf16_bK32_nn": ((128, 128, 32, 128, "bfloat16", False), (64, 128), "m64n128k16.f32.bf16.bf16",
                     ["[32, 128] innermost first, 64-byte swizzle", "[64, 32] innermost first, 128-byte swizzle"]),
    "bf16_bK32_nt": ((128, 128, 32, 128, "bfloat16", True), (64, 64), "m64n128k16.f32.bf16.bf16",
                     ["[32, 128] innermost first, 64-byte swizzle"]),
    "bf16_128x256x32_nn": ((128, 256, 32, 256, "bfloat16", False), (64, 128), "m64n256k16.f32.bf16.bf16",
                           ["[32, 128] innermost first, 64-byte swizzle",
                            "[64, 32] innermost first, 128-byte swizzle"]),
    "bf16_64x64x32_nn": ((64, 64, 32, 128, "bfloat16", False), (64, 128), "m64n64k16.f32.bf16.bf16",
                         ["[32, 64] innermost first, 64-byte swizzle", "[64, 32] innermost first, 128-byte swizzle"]),
    "f16_bK32_nn": ((128, 128, 32, 128, "float16", False), (64, 128), "m64n128k16.f32.f16.f16",
                    ["[32, 128] innermost first, 64-byte swizzle"]),
    "bf16_bN16_nn": ((64, 16, 32, 128, "bfloat16", False), (64, 32), "m64n16k16.f32.bf16.bf16",
                     ["[16, 32] innermost first, 32-byte swizzle"]),
    "bf16_bN8_nn": ((64, 8, 32, 128, "bfloat16", False), (64, 16), "m64n8k16.f32.bf16.bf16",
                    ["[8, 32] innermost first, no swizzle"]),
    "bf16_bN24_nn": ((64, 24, 32, 128, "bfloat16", False), (64, 16), "m64n24k16.f32.bf16.bf16",
                     ["[8, 32] innermost first, no swizzle"]),
    "tf32_bK32_nt": ((128, 128, 32, 128, "float32", True), (128, 128), "m64n128k8.f32.tf32.tf32",
                     ["[32, 128] innermost first, 128-byte swizzle"]),
    "tf32_bK16_nt": ((128, 256, 16, 256, "float32", True), (64, 64), "m64n256k8.f32.tf32.tf32",
                     ["[16, 128] innermost first, 64-byte swizzle", "[16, 256] innermost first, 64-byte swizzle"]),
    "fp8_bK64_nt": ((128, 256, 64, 256, "float8_e4m3", True), (64, 64), "m64n256k32.f32.e4m3.e4m3",
                    ["[64, 128] innermost first, 64-byte swizzle"]),
    "fp8_bK32_nt": ((128, 128, 32, 128, "float8_e4m3", True), (32, 32), "m64n128k32.f32.e4m3.e4m3",
                    ["[32, 128] innermost first, 32-byte swizzle"]),
}


def panel_matmul(bM, bN, bK, threads, dtype, trans_b, M=512, N=512, K=512):
    out = "float32" if dtype == "float32" else "bfloat16"
    return matmul(M, N, K, bM=bM, bN=bN, bK=bK, threads=threads, dtype=dtype, trans_b=trans_b, out_dtype=out)


@pytest.mark.parametrize("name", list(PANEL_SHAPES))
def test_every_tile_width_runs_on_wgmma_and_tma(name):
    (bM, bN, bK, threads, dtype, trans_b), (panel_a, panel_b), instruction, boxes = PANEL_SHAPES[name]
    func = panel_matmul(bM, bN, bK, threads, dtype, trans_b)
    # Built into a cubin (NVRTC runs ptxas, which checks the wgmma operands), then its PTX.
    kernel = compile_or_skip(func, target="cuda", arch=ARCH)
    src = kernel.get_kernel_source()
    groups_m = min(threads // 128, bM // 64)
    gemm = (f"wgmma_gemm_ss<{bM}, {bN}, {bK}, {groups_m}, {threads // 128 // groups_m}, false, "
            f"{'true' if trans_b else 'false'}, {panel_a}, {panel_b}>")
    assert gemm in src and "tma_load(" in src and "gemm_ss<" not in src.replace("wgmma_gemm_ss<", "")
    ir = kernel.get_ir()
    for box in boxes:
        assert box in ir, ir[:3000]
    ptx = emit(func, "ptx")
    assert f"wgmma.mma_async.sync.aligned.{instruction}" in ptx
    assert "cp.async.bulk.tensor.3d.shared::cluster.global" in ptx or "cp.async.bulk.tensor.2d" in ptx
    assert "mma.sync" not in ptx


@pytest.mark.parametrize("dtype", ["float32", "float8_e4m3"])
def test_tf32_and_fp8_with_b_stored_k_by_n_fall_back_and_say_why(dtype, capfd):
    # wgmma reads tf32 and fp8 operands K-major only: B stored K x N can't be fed to it, so the
    # gemm runs on mma.sync (tf32 m16n8k8, fp8 m16n8k32) and a DEBUG line names the T.gemm.
    func = panel_matmul(128, 128, 32, 128, dtype, False)
    tilec.set_log_level("DEBUG")
    try:
        capfd.readouterr()
        src = emit(func, "source")
        err = capfd.readouterr().err
    finally:
        tilec.set_log_level("WARNING")
    assert "wgmma_gemm" not in src and "gemm_ss<" in src
    lines = pathlib.Path(__file__).read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "T.gemm(A_s, B_s, C_l, transpose_B=trans_b)" in text)
    kind = "tf32" if dtype == "float32" else "fp8"
    assert (f"{__file__}:{line}:" in err and
            f"T.gemm runs on mma.sync, not wgmma: {kind} wgmma reads K-major operands only" in err and
            "B is stored K x N" in err), err


def test_a_gemm_on_wgmma_logs_nothing_and_other_fallbacks_say_why(capfd):
    tilec.set_log_level("DEBUG")
    try:
        capfd.readouterr()
        emit(panel_matmul(128, 128, 32, 128, "bfloat16", False), "source")
        on_wgmma = capfd.readouterr().err
        emit(matmul(512, 512, 512, bM=128, bN=128, bK=32, threads=192), "source")
        odd_threads = capfd.readouterr().err
    finally:
        tilec.set_log_level("WARNING")
    assert "not wgmma" not in on_wgmma, on_wgmma
    assert "not wgmma: the block's 192 threads are not whole warpgroups of 128" in odd_threads, odd_threads


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
    assert ("stmatrix_accumulator<128, 256, 2, 1, 128>" in src) == tma_store
    assert (src.count("tma_store(") == 4 and "tma_store_commit()" in src and "tma_store_wait_read()" in src) == \
        tma_store
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
    assert "wgmma_gemm" not in src and "tma_load" not in src


# --- on an H100 / H200 -------------------------------------------------------------------

def hopper_or_skip():
    import torch

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip(f"the Hopper path needs an sm_90 GPU, not {torch.cuda.get_device_name()}")
    return torch


# Relative (Frobenius) error allowed by operand type: 16-bit and fp8 operands are exact in the
# products, the bf16 output rounds to 2^-9; tf32 (float32 operands on tensor cores) keeps 10 bits of
# mantissa (wgmma truncates, mma.sync rounds), into a float32 output.
TOLERANCE = {"bfloat16": 1e-2, "float16": 1e-2, "float8_e4m3": 1e-2, "float32": 5e-3}


def check(kernel, M, N, K, dtype, trans_b, torch, out_dtype="bfloat16"):
    td = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float8_e4m3": torch.float8_e4m3fn,
          "float32": torch.float32}
    a = torch.randn(M, K, device="cuda").to(td[dtype])
    b = torch.randn(*((N, K) if trans_b else (K, N)), device="cuda").to(td[dtype])
    c = torch.full((M, N), float("nan"), device="cuda", dtype=td[out_dtype])
    kernel(a, b, c)
    ref = a.double() @ (b.double().t() if trans_b else b.double())
    err = ((c.double() - ref).norm() / ref.norm()).item()
    assert err < TOLERANCE[dtype], f"relative error {err}"


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
    assert "wgmma_gemm_rs<128, 128, 64, 2, false, 128>" in src and "tma_load(" in src


@pytest.mark.gpu
@pytest.mark.parametrize("M,N,K", [(1024, 1024, 1024), (1000, 1096, 960)])
def test_a_register_operand_computes_the_product(M, N, K):
    torch = hopper_or_skip()
    check(tilec.compile(matmul_register_a(M, N, K)), M, N, K, "bfloat16", False, torch)


def matmul_cleared_each_step(M, N, K, register_a, bM=128, bN=128, bK=64, threads=256):
    # C = the sum over the K blocks of P, each P = A_k B_k a gemm that clears its accumulator.
    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=threads) as (bx, by):
            if register_a:
                A_t = T.alloc_fragment((bM, bK), "bfloat16")
            else:
                A_t = T.alloc_shared((bM, bK), "bfloat16")
            B_s = T.alloc_shared((bK, bN), "bfloat16")
            P_f = T.alloc_fragment((bM, bN), "float32")
            C_f = T.alloc_fragment((bM, bN), "float32")
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, bK), num_stages=2):
                T.copy(A[by * bM, k * bK], A_t)
                T.copy(B[k * bK, bx * bN], B_s)
                T.gemm(A_t, B_s, P_f, clear_accum=True)
                for i, j in T.Parallel(bM, bN):
                    C_f[i, j] += P_f[i, j]
            T.copy(C_f, C[by * bM, bx * bN])

    return main


@pytest.mark.parametrize("register_a", [False, True])
def test_a_gemm_that_clears_its_accumulator_writes_no_zeros_first_on_wgmma(register_a):
    # The first K step's wgmmas ignore the accumulator (scale-d 0): zeros written first let the
    # compiler share one zero register with a register the wgmma writes, and ptxas then waits for
    # the wgmma where the zero is next read.
    src = compile_or_skip(matmul_cleared_each_step(512, 512, 512, register_a), target="cuda",
                          arch=ARCH).get_kernel_source()
    routine = ("wgmma_gemm_rs<128, 128, 64, 2, false, 128, 0, 0, false, true>" if register_a else
               "wgmma_gemm_ss<128, 128, 64, 2, 1, false, false, 128, 128, 0, 0, false, true>")
    assert routine in src, src
    assert not re.search(r"P_f\[[^]]*\] = 0x0p\+0f", src), src


@pytest.mark.gpu
@pytest.mark.parametrize("register_a", [False, True])
@pytest.mark.parametrize("M,N,K", [(1024, 1024, 1024), (1000, 1096, 960)])
def test_a_gemm_that_clears_its_accumulator_computes_each_product_alone(register_a, M, N, K):
    torch = hopper_or_skip()
    check(tilec.compile(matmul_cleared_each_step(M, N, K, register_a)), M, N, K, "bfloat16", False, torch,
          out_dtype="float32")


@pytest.mark.gpu
@pytest.mark.parametrize("name", list(PANEL_SHAPES))
@pytest.mark.parametrize("M,N,K", [(1024, 1024, 1024), (1000, 1096, 960)])
def test_every_tile_width_computes_the_product(name, M, N, K):
    # 64-, 32- and 16-byte panels (bK = 32, narrow B tiles, tf32, fp8) on wgmma and TMA; ragged
    # M and N tiles, which TMA fills with zeros past the edge.
    torch = hopper_or_skip()
    (bM, bN, bK, threads, dtype, trans_b), _, _, _ = PANEL_SHAPES[name]
    kernel = tilec.compile(panel_matmul(bM, bN, bK, threads, dtype, trans_b, M=M, N=N, K=K))
    assert "wgmma_gemm_ss<" in kernel.get_kernel_source()
    check(kernel, M, N, K, dtype, trans_b, torch, out_dtype="float32" if dtype == "float32" else "bfloat16")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float8_e4m3"])
def test_tf32_and_fp8_with_b_stored_k_by_n_compute_the_product_on_mma_sync(dtype):
    torch = hopper_or_skip()
    M, N, K = 1000, 1096, 960
    kernel = tilec.compile(panel_matmul(128, 128, 32, 128, dtype, False, M=M, N=N, K=K))
    assert "wgmma_gemm" not in kernel.get_kernel_source()
    check(kernel, M, N, K, dtype, False, torch, out_dtype="float32" if dtype == "float32" else "bfloat16")


@pytest.mark.gpu
@pytest.mark.parametrize("bM,bN,bK,threads", [(64, 32, 32, 128), (128, 64, 32, 128), (128, 128, 32, 256)])
def test_a_shared_epilogue_in_narrow_panels(bM, bN, bK, threads):
    # C tiles of 64- and 128-byte rows: stmatrix into 64-byte (and 128-byte) panels, then TMA
    # stores of that swizzle.
    torch = hopper_or_skip()
    M, N, K = 1000, 1096, 960
    kernel = tilec.compile(matmul(M, N, K, bM=bM, bN=bN, bK=bK, threads=threads, shared_epilogue=True))
    src = kernel.get_kernel_source()
    assert "stmatrix_accumulator<" in src and "tma_store(" in src
    check(kernel, M, N, K, "bfloat16", False, torch)


# --- T.atomic_add of a shared tile: a TMA reduce-add ---------------------------------------

def add_rows_through_shared(M, N, bM=64):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, bM), threads=128) as bx:
            X_f = T.alloc_fragment((bM, N), "float32")
            X_s = T.alloc_shared((bM, N), "float32")
            T.copy(X[bx * bM, 0], X_f)
            for i, j in T.Parallel(bM, N):
                X_f[i, j] *= 2
            T.copy(X_f, X_s)
            T.atomic_add(C[bx * bM:(bx + 1) * bM, 0:N], X_s)

    return main


@pytest.mark.parametrize("configs", ["tma", "no_tma"])
def test_an_atomic_add_of_a_shared_tile_is_a_tma_reduce_add(configs):
    kernel = compile_or_skip(add_rows_through_shared(256, 128), target="cuda", arch=ARCH,
                             pass_configs={"tilec.tma": False} if configs == "no_tma" else None)
    src = kernel.get_kernel_source()
    if configs == "no_tma":
        assert "tma_reduce_add(" not in src
        return
    # One reduce-add a 32-float panel, issued by thread 0 after the writers' stores reach the
    # async proxy; it waits until the tile has been read before the block ends.
    assert src.count("tma_reduce_add(") == 4
    add = src[src.index("T.atomic_add"):]
    assert add.index("fence_proxy_async") < add.index("sync_threads") < add.index("tma_reduce_add(")
    assert add.index("tma_reduce_add(") < add.index("tma_store_commit()") < add.index("tma_store_wait_read()")
    assert "tma_reduce_add(" not in compile_or_skip(add_rows_through_shared(256, 128), target="cuda",
                                                     arch="sm_80").get_kernel_source()


@pytest.mark.gpu
@pytest.mark.parametrize("M,N", [(256, 128), (200, 96)])
def test_a_tma_reduce_add_adds_every_element_once(M, N):
    torch = hopper_or_skip()
    x = torch.randn(M, N, device="cuda")
    c0 = torch.randn(M, N, device="cuda")
    c = c0.clone()
    tilec.compile(add_rows_through_shared(M, N))(x, c)
    torch.testing.assert_close(c, c0 + 2 * x, rtol=1e-6, atol=1e-6)


def add_scaled_blocks(M, N, bM=64, handoff=True):
    """C[k-th row block] += (k + 1) * X[k-th row block], one block after another through one
    shared tile: each TMA reduce-add's read must end before the next block is written into the
    tile. With `handoff`, a second tile's barrier comes between (thread 0 waits there, and the
    read runs on under the next block's load); without, the wait and a barrier of their own
    come right before the tile is written."""

    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            X_f = T.alloc_fragment((bM, N), "float32")
            X_s = T.alloc_shared((bM, N), "float32")
            if handoff:
                L_s = T.alloc_shared((bM, N), "float32")
            for k in T.serial(M // bM):
                rows = k * bM
                if handoff:
                    T.copy(X[rows, 0], L_s)
                    T.copy(L_s, X_f)
                else:
                    T.copy(X[rows, 0], X_f)
                for i, j in T.Parallel(bM, N):
                    X_f[i, j] *= k + 1
                T.copy(X_f, X_s)
                T.atomic_add(C[rows:rows + bM, 0:N], X_s)

    return main


@pytest.mark.parametrize("handoff", [True, False])
def test_a_tma_reduce_add_is_waited_for_before_its_tile_is_written_again(handoff):
    src = compile_or_skip(add_scaled_blocks(512, 128, handoff=handoff), target="cuda",
                          arch=ARCH).get_kernel_source()
    loop = src[src.index("for (int32_t k"):]
    # In the loop, thread 0 waits for the last block's read before the barrier ahead of the
    # tile's write (and once more after the loop); with the hand-off, that barrier is L_s's.
    assert src.count("tma_store_wait_read()") == 2
    wait = loop.index("tma_store_wait_read()")
    assert wait < loop.index("sync_threads()", wait) < loop.index("X_s[")
    assert ("shared_address(L_s)" in loop[:wait]) == handoff  # the hand-off's cp.async into L_s


@pytest.mark.gpu
@pytest.mark.parametrize("handoff", [True, False])
def test_a_tile_rewritten_after_its_tma_reduce_add_adds_what_it_held(handoff):
    torch = hopper_or_skip()
    M, N = 1024, 128
    x = torch.randn(M, N, device="cuda")
    c0 = torch.randn(M, N, device="cuda")
    c = c0.clone()
    tilec.compile(add_scaled_blocks(M, N, handoff=handoff))(x, c)
    scale = torch.arange(1, M // 64 + 1, device="cuda", dtype=torch.float32).repeat_interleave(64)[:, None]
    torch.testing.assert_close(c, c0 + scale * x, rtol=1e-6, atol=1e-5)


# --- a one-row tile (a step's LSE values) loaded by the producer -------------------------------

def scaled_row_blocks(M, N, bM):
    """O[r, c] = X[r, c] * W[r // bM, c]: each block of rows scaled by a row of weights, the
    row a one-row shared tile that the producer loads by TMA beside the block (the attention
    backward's LSE and Delta a step)."""

    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), W: T.Tensor((M // bM, N), "float32"),
             O: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            X_s = T.alloc_shared((bM, N), "float32")
            W_s = T.alloc_shared((1, N), "float32")
            for k in T.Pipelined(M // bM, num_stages=2):
                T.copy(X[k * bM, 0], X_s)
                T.copy(W[k:k + 1, 0:N], W_s)
                for i, j in T.Parallel(bM, N):
                    O[k * bM + i, j] = X_s[i, j] * W_s[0, j]

    return main


@pytest.mark.parametrize("N, bM, boxes", [(64, 64, 1), (512, 16, 2)])
def test_a_one_row_tile_is_a_tma_load_of_whole_rows(N, bM, boxes):
    src = compile_or_skip(scaled_row_blocks(8 * bM, N, bM), target="cuda", arch=ARCH).get_kernel_source()
    assert "empty_barriers" in src  # a producer warpgroup issues the copies
    # Unswizzled 16-byte panels, end to end: boxes of up to 256 floats, not one a panel.
    loads = re.findall(r"tma_load\(args\.tensor_maps\[1\], \(&W_s\[.*?panel_offset<1, %d, 4, 16>\((\d+), (\d+)\)" % N, src)
    assert [int(col) for _, col in loads] == [256 * b for b in range(boxes)]


@pytest.mark.gpu
@pytest.mark.parametrize("N, bM", [(64, 64), (512, 16)])
def test_a_one_row_tile_scales_its_block(N, bM):
    torch = hopper_or_skip()
    M = 8 * bM
    x = torch.randn(M, N, device="cuda")
    w = torch.randn(M // bM, N, device="cuda")
    o = torch.full((M, N), float("nan"), device="cuda")
    tilec.compile(scaled_row_blocks(M, N, bM))(x, w, o)
    torch.testing.assert_close(o, x * w.repeat_interleave(bM, dim=0), rtol=0, atol=0)


# --- a reduction across warpgroups inside the warp-specialized loop ---------------------------

def row_max_of_block_products(M, N, K, bM=64, bN=128, bK=64, threads=256):
    """Each row's largest entry over the K-blocks' partial products A[:, kb] @ B[:, kb]^T: a
    gemm whose columns are split over 2 warpgroups (FullCol), then a row reduction across
    them, inside the pipelined loop (MLA decode's shape: TileLang's example_mla_decode)."""

    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((N, K), "bfloat16"), R: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, bM), threads=threads) as bx:
            A_s = T.alloc_shared((bM, bK), "bfloat16")
            B_s = T.alloc_shared((bN, bK), "bfloat16")
            S = T.alloc_fragment((bM, bN), "float32")
            row_max = T.alloc_fragment((bM,), "float32")
            T.fill(row_max, -T.infinity("float32"))
            for k in T.Pipelined(T.ceildiv(K, bK), num_stages=2):
                T.copy(A[bx * bM, k * bK], A_s)
                T.copy(B[0, k * bK], B_s)
                T.gemm(A_s, B_s, S, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullCol)
                T.reduce_max(S, row_max, dim=1, clear=False)
            T.copy(row_max, R[bx * bM])

    return main


def test_a_reduction_across_warpgroups_in_the_consumers_synchronizes_them_only():
    # A barrier of the whole block there waits for the producer warpgroup, which never comes:
    # the launch hangs (it did: TileLang's MLA decode examples).
    src = compile_or_skip(row_max_of_block_products(256, 128, 512), target="cuda",
                          arch=ARCH).get_kernel_source()
    assert "setmaxnreg_inc" in src and "tma_load" in src, "not the warp-specialized TMA path"
    consumers = src[src.index("setmaxnreg_inc"):]
    assert "_exchange" in consumers, "the reduction does not cross warps through shared memory"
    assert "sync_threads_partial<1, 256>" in consumers and "tilec_cuda::sync_threads()" not in consumers


def test_t_sync_threads_in_the_consumers_waits_for_them_only():
    @T.prim_func
    def main(A: T.Tensor((256, 512), "bfloat16"), B: T.Tensor((128, 512), "bfloat16"),
             C: T.Tensor((256, 128), "float32")):
        with T.Kernel(4, threads=256) as bx:
            A_s = T.alloc_shared((64, 64), "bfloat16")
            B_s = T.alloc_shared((128, 64), "bfloat16")
            S = T.alloc_fragment((64, 128), "float32")
            T.clear(S)
            for k in T.Pipelined(8, num_stages=2):
                T.copy(A[bx * 64, k * 64], A_s)
                T.copy(B[0, k * 64], B_s)
                T.gemm(A_s, B_s, S, transpose_B=True)
                T.sync_threads()
            T.copy(S, C[bx * 64, 0])

    src = compile_or_skip(main, target="cuda", arch=ARCH).get_kernel_source()
    consumers = src[src.index("setmaxnreg_inc"):]
    assert "sync_threads_partial<1, 256>" in consumers and "tilec_cuda::sync_threads()" not in consumers


@pytest.mark.gpu
@pytest.mark.parametrize("M,K", [(256, 512), (192, 1024)])
def test_a_reduction_across_warpgroups_computes_the_row_max(M, K):
    torch = hopper_or_skip()
    N, bK = 128, 64
    kernel = compile_or_skip(row_max_of_block_products(M, N, K, bK=bK), target="cuda", arch=ARCH)
    a = torch.randn(M, K, device="cuda").to(torch.bfloat16)
    b = torch.randn(N, K, device="cuda").to(torch.bfloat16)
    r = torch.full((M,), float("nan"), device="cuda")
    kernel(a, b, r)
    partial = torch.einsum("mkx,nkx->kmn", a.double().view(M, K // bK, bK), b.double().view(N, K // bK, bK))
    ref = partial.amax(dim=2).amax(dim=0)
    err = ((r.double() - ref).abs().max() / ref.abs().max()).item()
    assert err < 1e-5, f"relative error {err}"


# --- operands that are K-slices of a panel tile; a policy no warpgroup grid fits ---------------

def gemm_of_k_halves(M, N, K, policy):
    """C = A @ B^T as two gemms over the K halves of one A tile and one B tile (DSA's sparse MLA
    splits Q so: Q_shared[:, :512] and Q_shared[:, 512:]), 2 warpgroups over a 64-row tile."""

    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((N, K), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, 64), threads=256) as bx:
            A_s = T.alloc_shared((64, K), "bfloat16")
            B_s = T.alloc_shared((N, K), "bfloat16")
            C_l = T.alloc_fragment((64, N), "float32")
            T.copy(A[bx * 64, 0], A_s)
            T.copy(B[0, 0], B_s)
            T.clear(C_l)
            T.gemm(A_s[:, 0:K // 2], B_s[:, 0:K // 2], C_l, transpose_B=True, policy=policy)
            T.gemm(A_s[:, K // 2:K], B_s[:, K // 2:K], C_l, transpose_B=True, policy=policy)
            T.copy(C_l, C[bx * 64, 0])

    return main


@pytest.mark.parametrize("policy", ["FullRow", "Square"])
def test_k_slices_of_a_panel_tile_run_on_wgmma(policy, capfd):
    tilec.set_log_level("DEBUG")
    try:
        capfd.readouterr()
        src = emit(gemm_of_k_halves(128, 64, 256, getattr(T.GemmWarpPolicy, policy)), "source")
        err = capfd.readouterr().err
    finally:
        tilec.set_log_level("WARNING")
    assert src.count("wgmma_gemm_ss<64, 64, 128, 1, 2") == 2, src
    assert "panel_offset<64, 256, 2, 128>(0, 128)" in src  # the second half starts a panel
    assert "not wgmma" not in err, err
    if policy == "FullRow":
        assert "T.gemm's policy FullRow fits no grid of 2 warpgroups over its 64 x 64 tile on wgmma: 1 x 2 instead" in err


def test_a_k_slice_not_on_panel_boundaries_falls_back_and_says_why(capfd):
    @T.prim_func
    def main(A: T.Tensor((64, 128), "bfloat16"), B: T.Tensor((64, 128), "bfloat16"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 128), "bfloat16")
            B_s = T.alloc_shared((64, 32), "bfloat16")
            C_l = T.alloc_fragment((64, 64), "float32")
            T.copy(A, A_s)
            T.copy(B[0, 0], B_s)
            T.clear(C_l)
            T.gemm(A_s[:, 16:48], B_s, C_l, transpose_B=True)
            T.copy(C_l, C)

    tilec.set_log_level("DEBUG")
    try:
        capfd.readouterr()
        emit(main, "source")
        err = capfd.readouterr().err
    finally:
        tilec.set_log_level("WARNING")
    assert "not wgmma: A ('A_s') is not a whole shared tile or whole panels of one" in err, err


def gemm_of_n_halves(M, N, K, stages=2):
    """C = A @ B with B stored K x N, as two gemms over the N halves of one stage of a stack of B
    tiles (MLA decode splits its V so: KV_shared[stage, :, :256] and KV_shared[stage, :, 256:])."""

    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
            A_s = T.alloc_shared((64, K), "bfloat16")
            B_s = T.alloc_shared((stages, K, N), "bfloat16")
            C_l = T.alloc_fragment((64, N // 2), "float32")
            C_r = T.alloc_fragment((64, N // 2), "float32")
            T.copy(A[bx * 64, 0], A_s)
            T.copy(B[0, 0], B_s[stages - 1, :, :])
            T.clear(C_l)
            T.clear(C_r)
            T.gemm(A_s, B_s[stages - 1, :, :N // 2], C_l)
            T.gemm(A_s, B_s[stages - 1, :, N // 2:], C_r)
            T.copy(C_l, C[bx * 64, 0])
            T.copy(C_r, C[bx * 64, N // 2])

    return main


def test_n_slices_of_a_stage_of_b_stored_k_by_n_run_on_wgmma(capfd):
    tilec.set_log_level("DEBUG")
    try:
        capfd.readouterr()
        src = emit(gemm_of_n_halves(128, 256, 64), "source")
        err = capfd.readouterr().err
    finally:
        tilec.set_log_level("WARNING")
    assert src.count("wgmma_gemm_ss<64, 128, 64, 1, 1, false, false") == 2, src
    assert "panel_offset<64, 256, 2, 128>(0, 128)" in src  # the second half starts at panel 2
    assert "not wgmma" not in err, err


@pytest.mark.gpu
@pytest.mark.parametrize("M,N,K", [(128, 256, 64), (192, 512, 64)])
def test_n_slices_of_a_stage_of_b_stored_k_by_n_compute_the_product(M, N, K):
    torch = hopper_or_skip()
    kernel = compile_or_skip(gemm_of_n_halves(M, N, K), target="cuda", arch=ARCH)
    a = torch.randn(M, K, device="cuda").to(torch.bfloat16)
    b = torch.randn(K, N, device="cuda").to(torch.bfloat16)
    c = torch.full((M, N), float("nan"), device="cuda")
    kernel(a, b, c)
    ref = a.double() @ b.double()
    err = ((c.double() - ref).norm() / ref.norm()).item()
    assert err < 1e-5, f"relative error {err}"


@pytest.mark.gpu
@pytest.mark.parametrize("policy", ["FullRow", "Square"])
@pytest.mark.parametrize("M,N,K", [(128, 64, 256), (192, 64, 384)])
def test_k_slices_of_a_panel_tile_compute_the_product(policy, M, N, K):
    torch = hopper_or_skip()
    kernel = compile_or_skip(gemm_of_k_halves(M, N, K, getattr(T.GemmWarpPolicy, policy)), target="cuda", arch=ARCH)
    a = torch.randn(M, K, device="cuda").to(torch.bfloat16)
    b = torch.randn(N, K, device="cuda").to(torch.bfloat16)
    c = torch.full((M, N), float("nan"), device="cuda")
    kernel(a, b, c)
    ref = a.double() @ b.double().t()
    err = ((c.double() - ref).norm() / ref.norm()).item()
    assert err < 1e-5, f"relative error {err}"

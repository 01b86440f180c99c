"""T.copy's and T.tma_copy's eviction_policy (TileLang's): the priority in L2 of the lines a load
from global memory reads, on CUDA its TMA loads' and cp.async copies' .L2::cache_hint with a
createpolicy value; a hint the CPU ignores. The code is checked through NVRTC for sm_90a without
a GPU, the results on the CPU and on an H100/H200."""

import re

import numpy as np
import pytest

import tilec
import tilec.language as T
from tilec import CompileError
from helpers import rand, rng  # noqa: F401  (rng is a fixture)
from test_hopper import LADDER, check, emit, hopper_or_skip
from test_import_source import kernel_with


def hinted_matmul(M, N, K, bM=128, bN=128, bK=64, a_policy="evict_first", b_policy="evict_last"):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=256) as (bx, by):
            A_s = T.alloc_shared((bM, bK), "float16")
            B_s = T.alloc_shared((bK, bN), "float16")
            C_l = T.alloc_fragment((bM, bN), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bK), num_stages=3):
                T.copy(A[by * bM, k * bK], A_s, eviction_policy=a_policy)
                T.copy(B[k * bK, bx * bN], B_s, eviction_policy=b_policy)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * bM, bx * bN])

    return main


def doubled_by_tma(n, block=128):
    """T.tma_copy's tiles of a 1-D tensor, evict_first, doubled out."""

    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
            A_s = T.alloc_shared((1, block), "float32")
            ready = T.alloc_barrier(128)
            T.tma_copy(A[bx * block:(bx + 1) * block], A_s[0, :], barrier=ready, eviction_policy="evict_first")
            T.barrier_arrive(ready)
            T.barrier_wait(ready, 0)
            for i in T.Parallel(block):
                if bx * block + i < n:
                    B[bx * block + i] = A_s[0, i] * 2

    return main


def test_tma_loads_carry_the_policy_as_a_template_argument():
    source = emit(hinted_matmul(512, 512, 512), "source")
    assert re.search(r"tma_load<1>\(", source) and re.search(r"tma_load<2>\(", source)
    ptx = emit(hinted_matmul(512, 512, 512), "ptx")
    assert "createpolicy.fractional.L2::evict_first.b64" in ptx and "createpolicy.fractional.L2::evict_last.b64" in ptx
    assert re.search(r"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     r".L2::cache_hint \[%r\d+\], \[%rd\d+, \{%r\d+, %r\d+\}\], \[%r\d+\], %rd\d+;", ptx)


def test_t_tma_copy_takes_it_too(rng):
    assert re.search(r"tma_load<1>\(", emit(doubled_by_tma(1000), "source"))
    a = rng.standard_normal(1000).astype(np.float32)
    b = np.full(1000, np.nan, np.float32)
    tilec.compile(doubled_by_tma(1000), target="cpu")(a, b)
    np.testing.assert_array_equal(b, a * 2)


def test_without_a_policy_the_loads_are_as_before():
    source = emit(hinted_matmul(512, 512, 512, a_policy=None, b_policy="evict_normal"), "source")
    assert "tma_load(" in source and "tma_load<" not in source
    assert ".L2::cache_hint" not in emit(hinted_matmul(512, 512, 512, a_policy=None, b_policy=None), "ptx")


def test_cp_async_copies_carry_it_without_tma():
    source = emit(hinted_matmul(512, 512, 512), "source", LADDER["wgmma"])
    assert "tma_load" not in source
    assert re.search(r"cp_async_16<1, 0>\(", source) and re.search(r"cp_async_16<2, 0>\(", source)
    assert re.search(r"cp.async.cg.shared.global.L2::cache_hint \[%r\d+\], \[%rd\d+\], 16, %r\d+, %rd\d+;",
                     emit(hinted_matmul(512, 512, 512), "ptx", LADDER["wgmma"]))


def test_the_tile_ir_shows_it():
    ir = emit(hinted_matmul(512, 512, 512), "tile-ir")
    assert re.search(r'T.copy\(A\[.*\], A_s.*, eviction_policy="evict_first"\)', ir)
    assert re.search(r'T.copy\(B\[.*\], B_s.*, eviction_policy="evict_last"\)', ir)


def test_the_cpu_ignores_it(rng):
    M, N, K = 192, 256, 320
    a, b = rand((M, K), "float16", rng), rand((K, N), "float16", rng)
    c = np.full((M, N), np.nan, np.float16)
    tilec.compile(hinted_matmul(M, N, K), target="cpu")(a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.linalg.norm(c - ref) / np.linalg.norm(ref) < 1e-3


@pytest.mark.parametrize("lines,message", [
    (["S = T.alloc_shared((32,), 'float32')", "T.copy(X[0:32], S, eviction_policy='first')"],
     "T.copy's eviction_policy is \"evict_first\", \"evict_normal\" or \"evict_last\", not str 'first'"),
    (["S = T.alloc_shared((32,), 'float32')", "T.copy(X[0:32], S, eviction_policy=2)"],
     "T.copy's eviction_policy is \"evict_first\", \"evict_normal\" or \"evict_last\", not int"),
    (["S = T.alloc_shared((32,), 'float32')", "b = T.alloc_barrier(32)",
      "T.tma_copy(X[0:32], S, barrier=b, eviction_policy='evict_later')"],
     "T.tma_copy's eviction_policy is \"evict_first\", \"evict_normal\" or \"evict_last\", not str 'evict_later'"),
])
def test_mistakes_are_errors_at_their_line(lines, message, tmp_path):
    with pytest.raises(CompileError, match=r"kernel.py:\d+:\d+: error: .*" + re.escape(message)):
        emit(kernel_with(lines, tmp_path), "ir")


@pytest.mark.gpu
def test_t_tma_copy_with_the_hint_is_right():
    torch = hopper_or_skip()
    a = torch.randn(1000, device="cuda")
    b = torch.full((1000,), float("nan"), device="cuda")
    tilec.compile(doubled_by_tma(1000))(a, b)
    assert torch.equal(b, a * 2)


@pytest.mark.gpu
@pytest.mark.parametrize("step", ["wgmma", "persistent"])
def test_the_product_is_right_with_the_hints(step):
    torch = hopper_or_skip()
    check(tilec.compile(hinted_matmul(1000, 1096, 960), pass_configs=LADDER[step]), 1000, 1096, 960, "float16", False,
          torch, out_dtype="float16")

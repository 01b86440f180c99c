"""T.Pipelined loops on Hopper over the shapes a pipeline can take, each under a watchdog.

The warp-specialized pipeline (a producer warpgroup filling stages on mbarriers, the kernel's
threads consuming them) must finish and be right for every trip count (0, 1, fewer than the
stages, varying from block to block, symbolic), for 1, 2 and 3 consumer warpgroups and 1 to 4
stages; so must the pipeline without a producer warpgroup (thread 0 issuing the copies) that
it falls back to. The kernels are a GEMM whose K loop runs a trip count chosen at call time,
and TileLang's flash-attention forward (causal: each query block runs its own number of key
blocks), with a symbolic sequence length.

Each case runs in a worker process under gpu_watchdog.Watchdog: a hang fails that case with
``Hang`` and the next case gets a fresh worker. Without a GPU, NVRTC still compiles every
kernel for sm_90a and the source is checked for the pipeline it should have.
"""

import math
import os

import pytest

import tilec
import tilec.language as T
from gpu_watchdog import Watchdog
from helpers import skip_without_nvrtc

ARCH = "sm_90a"
CONFIGS = {"warp_specialized": {}, "thread0_issues": {"tilec.warp_specialize": False}}
# Consumer threads -> the tile rows the GEMM and attention kernels give them (64 a warpgroup).
WARPGROUP_ROWS = {128: 64, 256: 128, 384: 192}
STAGES = [1, 2, 3, 4]
# A case compiles its kernel (NVRTC) and runs a few sizes; under compute-sanitizer
# (bench/sanitize.sh) kernels run far slower, and it allows more.
WATCHDOG_SECONDS = int(os.environ.get("TILEC_WATCHDOG_SECONDS", "120"))


# --- the kernels ------------------------------------------------------------------------

def gemm(kind, threads, stages, M=512, N=256, K=1024, bN=128, bK=64):
    """C = A @ B over the first `trip count` K blocks of each block row.

    kind "scalar": trip count min(K / bK, n_iter), n_iter given at call time;
    "varying": min(K / bK, by + n_iter), a different count each block row;
    "symbolic": K is a symbolic dim (A is passed as A^T, so every stride stays a constant);
    "guarded": all of K, in block rows below n_iter only: the others' threads skip the loop (a
    loop under a runtime condition keeps the cp.async pipeline)."""
    bM = WARPGROUP_ROWS[threads]
    k_dim = T.symbolic("K") if kind == "symbolic" else K
    a_shape = (k_dim, M) if kind == "symbolic" else (M, K)

    @T.prim_func
    def main(A: T.Tensor(a_shape, "float16"), B: T.Tensor((k_dim, N), "float16"),
             C: T.Tensor((M, N), "float32"), n_iter: T.int32):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=threads) as (bx, by):
            A_s = T.alloc_shared((bK, bM) if kind == "symbolic" else (bM, bK), "float16")
            B_s = T.alloc_shared((bK, bN), "float16")
            C_l = T.alloc_fragment((bM, bN), "float32")
            T.clear(C_l)
            if kind == "scalar":
                trips = T.min(T.ceildiv(k_dim, bK), n_iter)
            elif kind == "varying":
                trips = T.min(T.ceildiv(k_dim, bK), by + n_iter)
            elif kind == "guarded":
                trips = T.ceildiv(k_dim, bK)
            else:
                trips = T.ceildiv(k_dim, bK)
            if kind == "guarded":
                if by < n_iter:
                    for k in T.Pipelined(trips, num_stages=stages):
                        T.copy(A[by * bM, k * bK], A_s)
                        T.copy(B[k * bK, bx * bN], B_s)
                        T.gemm(A_s, B_s, C_l)
            else:
                for k in T.Pipelined(trips, num_stages=stages):
                    if kind == "symbolic":
                        T.copy(A[k * bK, by * bM], A_s)
                    else:
                        T.copy(A[by * bM, k * bK], A_s)
                    T.copy(B[k * bK, bx * bN], B_s)
                    T.gemm(A_s, B_s, C_l, transpose_A=kind == "symbolic")
            T.copy(C_l, C[by * bM, bx * bN])

    return main


def flash_attention(threads, stages, causal, heads=2, dim=64, block_N=64):
    """TileLang's example_mha_fwd_bshd forward, with a symbolic sequence length. The running
    maximum keeps the previous blocks' (a query block taller than a key block has rows whose keys
    in some block are all masked)."""
    block_M = WARPGROUP_ROWS[threads]
    seq_len = T.symbolic("S")
    scale = (1.0 / dim) ** 0.5 * 1.44269504
    shape = [2, seq_len, heads, dim]
    dtype, accum_dtype = "float16", "float"

    @T.prim_func
    def main(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype),
             Output: T.Tensor(shape, dtype)):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, 2, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_M, dim], dtype)
            K_shared = T.alloc_shared([block_N, dim], dtype)
            V_shared = T.alloc_shared([block_N, dim], dtype)
            O_shared = T.alloc_shared([block_M, dim], dtype)
            acc_s = T.alloc_fragment([block_M, block_N], accum_dtype)
            acc_s_cast = T.alloc_fragment([block_M, block_N], dtype)
            acc_o = T.alloc_fragment([block_M, dim], accum_dtype)
            scores_max = T.alloc_fragment([block_M], accum_dtype)
            scores_max_prev = T.alloc_fragment([block_M], accum_dtype)
            scores_scale = T.alloc_fragment([block_M], accum_dtype)
            scores_sum = T.alloc_fragment([block_M], accum_dtype)
            logsum = T.alloc_fragment([block_M], accum_dtype)

            T.copy(Q[bz, bx * block_M:(bx + 1) * block_M, by, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, -T.infinity(accum_dtype))
            for k in T.Pipelined(
                    T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N))
                    if causal else T.ceildiv(seq_len, block_N), num_stages=stages):
                T.copy(K[bz, k * block_N:(k + 1) * block_N, by, :], K_shared)
                if causal:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0,
                                                     -T.infinity(acc_s.dtype))
                else:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(k * block_N + j >= seq_len,
                                                     -T.infinity(acc_s.dtype), 0)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(scores_max, scores_max_prev)
                T.fill(scores_max, -T.infinity(accum_dtype))
                T.reduce_max(acc_s, scores_max, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    scores_max[i] = T.max(scores_max[i], scores_max_prev[i])
                for i in T.Parallel(block_M):
                    scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] *= scores_scale[i]
                for i, j in T.Parallel(block_M, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
                T.copy(acc_s, acc_s_cast)
                T.copy(V[bz, k * block_N:(k + 1) * block_N, by, :], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
                T.reduce_sum(acc_s, scores_sum, dim=1)
                for i in T.Parallel(block_M):
                    logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, O_shared)
            T.copy(O_shared, Output[bz, bx * block_M:(bx + 1) * block_M, by, :])

    return main


def gemm_cases():
    for kind in ("scalar", "varying", "symbolic", "guarded"):
        for threads in WARPGROUP_ROWS:
            for stages in STAGES:
                for config in CONFIGS:
                    yield pytest.param(kind, threads, stages, config,
                                       id=f"{kind}-{threads}threads-{stages}stages-{config}")


def attention_cases():
    for causal in (True, False):
        for threads in WARPGROUP_ROWS:
            for stages in (1, 2):
                for config in CONFIGS:
                    yield pytest.param(causal, threads, stages, config,
                                       id=f"{'causal' if causal else 'full'}-{threads}threads-"
                                          f"{stages}stages-{config}")


def compile_kernel(func, config, out_idx=None, arch=None):
    return tilec.compile(func, out_idx=out_idx, target="cuda", arch=arch,
                         pass_configs=CONFIGS[config])


def pipeline_of(source):
    if "mbarrier_arrive_per_warp" in source:
        return "warp_specialized"
    if "tma_load(" in source:
        return "thread0_issues"
    return "cp.async"


# --- run in the watchdog's worker (needs torch and a GPU) ----------------------------------

_kernels = {}


def _kernel(key, build, config, out_idx=None):
    if key not in _kernels:
        _kernels[key] = compile_kernel(build(), config, out_idx)
    return _kernels[key]


def _relative_error(out, ref):
    import torch

    if torch.isnan(out).any():
        return math.inf
    return ((out.double() - ref.double()).norm() / max(ref.double().norm().item(), 1e-30)).item()


def run_gemm(kind, threads, stages, config, M=512, N=256, K=1024, bK=64):
    """The trip counts checked: 0, 1, fewer than the stages, the stages, one more, all of K."""
    import torch

    kernel = _kernel(("gemm", kind, threads, stages, config), lambda: gemm(kind, threads, stages),
                     config)
    bM = WARPGROUP_ROWS[threads]
    rows = torch.arange(M, device="cuda") // bM
    errors = {}
    runs = ([(K, n) for n in sorted({0, 1, max(stages - 1, 1), stages, stages + 1, K // bK})]
            if kind != "symbolic" else [(k, 0) for k in (64, 64 * stages + 40, 1000, K)])
    for k_len, n_iter in runs:
        gen = torch.Generator(device="cuda").manual_seed(k_len * 131 + n_iter)
        a = torch.randn(M, k_len, device="cuda", generator=gen).half()
        b = torch.randn(k_len, N, device="cuda", generator=gen).half()
        c = torch.full((M, N), float("nan"), device="cuda")
        kernel(a.t().contiguous() if kind == "symbolic" else a, b, c, n_iter)
        torch.cuda.synchronize()
        blocks = math.ceil(k_len / bK)
        trips = {"scalar": torch.full_like(rows, min(blocks, n_iter)),
                 "varying": torch.clamp(rows + n_iter, max=blocks),
                 "symbolic": torch.full_like(rows, blocks),
                 "guarded": (rows < n_iter) * blocks}[kind]
        used = (torch.arange(k_len, device="cuda")[None, :] < (trips[:, None] * bK)).to(a.dtype)
        ref = (a * used).double() @ b.double()
        errors[f"K={k_len} n_iter={n_iter}"] = (
            _relative_error(c, ref) if ref.norm() > 0 else float(c.abs().max().item() if not
                                                                 torch.isnan(c).any() else math.inf))
    return {"pipeline": pipeline_of(kernel.get_kernel_source()), "errors": errors}


def run_attention(causal, threads, stages, config):
    import torch

    kernel = _kernel(("attention", causal, threads, stages, config),
                     lambda: flash_attention(threads, stages, causal), config, out_idx=[3])
    errors = {}
    for seq_len in sorted({64, 100, 128, 300, WARPGROUP_ROWS[threads] * 3}):
        gen = torch.Generator(device="cuda").manual_seed(seq_len)
        q, k, v = (torch.randn(2, seq_len, 2, 64, device="cuda", generator=gen).half()
                   for _ in range(3))
        out = kernel(q, k, v)
        torch.cuda.synchronize()
        ref = torch.nn.functional.scaled_dot_product_attention(
            *(x.transpose(1, 2).double() for x in (q, k, v)), is_causal=causal).transpose(1, 2)
        errors[f"S={seq_len}"] = _relative_error(out, ref)
    return {"pipeline": pipeline_of(kernel.get_kernel_source()), "errors": errors}


# --- the tests -----------------------------------------------------------------------------

def expected_pipeline(config, kind=None):
    return "cp.async" if kind == "guarded" else config


def compile_or_skip(func, config, out_idx=None):
    with skip_without_nvrtc():
        return compile_kernel(func, config, out_idx, arch=ARCH)


@pytest.mark.parametrize("kind,threads,stages,config", list(gemm_cases()))
def test_gemm_pipeline_source(kind, threads, stages, config):
    source = compile_or_skip(gemm(kind, threads, stages), config).get_kernel_source()
    assert pipeline_of(source) == expected_pipeline(config, kind)
    # The consumers grow into the registers the producer frees, never more (setmaxnreg.inc
    # would wait for them forever).
    specialized = expected_pipeline(config, kind) == "warp_specialized"
    grown = {128: None, 256: 240, 384: 160}[threads] if specialized else None
    assert ("setmaxnreg_inc<%s>" % grown in source) if grown else "setmaxnreg_" not in source


@pytest.mark.parametrize("causal,threads,stages,config", list(attention_cases()))
def test_attention_pipeline_source(causal, threads, stages, config):
    source = compile_or_skip(flash_attention(threads, stages, causal), config, [3]).get_kernel_source()
    assert pipeline_of(source) == expected_pipeline(config)


@pytest.fixture(scope="module")
def watchdog():
    dog = Watchdog(WATCHDOG_SECONDS)
    yield dog
    dog.close()


def check(result, tolerance):
    bad = {run: err for run, err in result["errors"].items() if not err <= tolerance}
    assert not bad, f"relative errors over {tolerance} ({result['pipeline']} pipeline): {bad}"


@pytest.mark.gpu
@pytest.mark.parametrize("kind,threads,stages,config", list(gemm_cases()))
def test_gemm_pipeline_finishes_and_is_right(watchdog, kind, threads, stages, config):
    result = watchdog.call(__file__, "run_gemm", kind=kind, threads=threads, stages=stages,
                           config=config)
    assert result["pipeline"] == expected_pipeline(config, kind)
    check(result, 1e-3)


@pytest.mark.gpu
@pytest.mark.parametrize("causal,threads,stages,config", list(attention_cases()))
def test_attention_pipeline_finishes_and_is_right(watchdog, causal, threads, stages, config):
    result = watchdog.call(__file__, "run_attention", causal=causal, threads=threads,
                           stages=stages, config=config)
    assert result["pipeline"] == expected_pipeline(config)
    check(result, 1e-2)


def test_the_watchdog_fails_a_hanging_call_and_recovers(tmp_path):
    script = tmp_path / "stalls.py"
    script.write_text("import time\n\ndef stall(seconds):\n    time.sleep(seconds)\n    return seconds\n"
                      "\ndef fail():\n    raise ValueError('bad')\n")
    dog = Watchdog(1)
    try:
        with pytest.raises(AssertionError, match="did not finish in 1 s"):
            dog.call(str(script), "stall", seconds=30)
        with pytest.raises(AssertionError, match="ValueError: bad"):
            dog.call(str(script), "fail")
        assert dog.call(str(script), "stall", seconds=0) == 0
    finally:
        dog.close()


"""tilec.ops.dsa against references in numpy, on the GPU where there is one, else on the CPU;
and each kernel built for sm_90a through NVRTC."""

import re

import ml_dtypes
import numpy as np
import pytest

from tilec.ops import dsa
from tilec.ops.dsa.indexer import CONFIG as INDEXER_CONFIG, HOPPER_CONFIG as INDEXER_TMA_CONFIG
from tilec.ops.dsa.indexer import indexer_decode_kernel, indexer_logits_kernel
from tilec.ops.dsa.indexer_hopper import HOPPER_CONFIG as INDEXER_HOPPER_CONFIG, indexer_logits_hopper_kernel
from tilec.ops.dsa.fp8_cache import FP8_TOKEN_BYTES, scales_and_rope
from tilec.ops.dsa.quant import act_quant_kernel
from tilec.ops.dsa.sparse_mla import CONFIG as SPARSE_MLA_CONFIG, PREFILL_CONFIG as SPARSE_PREFILL_CONFIG
from tilec.ops.dsa.sparse_mla import sparse_mla_decode_kernel, sparse_mla_prefill_kernel
from tilec.ops.dsa.sparse_mla_hopper import (HOPPER_CONFIG, hopper_fits, sparse_mla_decode_hopper_kernel,
                                             sparse_mla_prefill_hopper_kernel)
from tilec.ops.dsa.sparse_mla_seesaw import (SEESAW_CONFIG, seesaw_fits, sparse_mla_decode_seesaw_kernel,
                                             sparse_mla_prefill_seesaw_kernel)
from tilec.ops.dsa.step import causal_ranges_kernel
from tilec.ops.dsa.topk import CONFIG as TOPK_CONFIG
from tilec.ops.dsa.topk import topk_kernel

from helpers import build_for_cuda, compiled_kernels, rand, rng  # noqa: F401  (rng is a fixture)
from test_hopper import hopper_or_skip
from test_ops import ON_GPU, on_target, to_numpy

# The bound on an fp8 dot product's error, relative to the sum of its terms' magnitudes. Hopper's
# fp8 tensor cores keep about 14 bits while they accumulate (DeepSeek-V3 report, section 3.3.2);
# the CPU sums in float32.
FP8_SUM_RTOL = 2.0 ** -12 if ON_GPU else 1e-5


def act_quant_reference(x, block_size, scale_fmt):
    """DeepSeek's act_quant in float32: s = max(amax, 1e-4) / 448 a block (rounded up to a power
    of two for "ue8m0"), y = clamp(x / s, +-448) rounded to float8_e4m3fn."""
    x = x.astype(np.float32)
    groups = -(-x.shape[-1] // block_size)
    padded = np.zeros(x.shape[:-1] + (groups * block_size,), np.float32)
    padded[..., :x.shape[-1]] = x
    blocks = padded.reshape(x.shape[:-1] + (groups, block_size))
    scale = np.maximum(np.abs(blocks).max(-1), np.float32(1e-4)) / np.float32(448)
    if scale_fmt == "ue8m0":
        scale = np.exp2(np.ceil(np.log2(scale.astype(np.float64)))).astype(np.float32)
    y = np.clip(blocks / scale[..., None], -448, 448).reshape(padded.shape)[..., :x.shape[-1]]
    return y.astype(ml_dtypes.float8_e4m3fn), scale.astype(np.float32)


@pytest.mark.parametrize("shape,block_size", [((61, 200), 128), ((3, 5, 256), 128), ((1, 7), 128),
                                              ((213, 96), 64), ((2, 1521), 128)])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("scale_fmt", [None, "ue8m0"])
def test_act_quant_matches_deepseeks_arithmetic_bit_for_bit(shape, block_size, dtype, scale_fmt, rng):
    # Magnitudes from 1e-3 to 1e3 a row, so that blocks get scales far apart; row 0 is zeros
    # (every block of it gets the smallest scale, and y = 0).
    magnitude = 10.0 ** rng.uniform(-3, 3, size=shape[:-1] + (1,))
    x = (rand(shape, "float32", rng) * magnitude).astype(rand((1,), dtype, rng).dtype)
    x.reshape(-1, shape[-1])[0] = 0
    y, s = dsa.act_quant(*on_target(x), block_size=block_size, scale_fmt=scale_fmt)
    y, s = to_numpy(y, "float8_e4m3"), to_numpy(s, "float32")
    ref_y, ref_s = act_quant_reference(x, block_size, scale_fmt)
    assert y.shape == shape and s.shape == ref_s.shape
    np.testing.assert_array_equal(s, ref_s)
    np.testing.assert_array_equal(y.view(np.uint8), ref_y.view(np.uint8))
    # and it is a quantization of x: within half an e4m3 step (2^-4 relative) of it, where the
    # block's largest value maps to 448 or, with power-of-two scales, above 224
    dequantized = y.astype(np.float32) * np.repeat(s, block_size, axis=-1)[..., :shape[-1]]
    assert np.all(np.abs(dequantized - x.astype(np.float32))
                  <= np.abs(x.astype(np.float32)) / 16 + np.repeat(s, block_size, axis=-1)[..., :shape[-1]] / 2 ** 9)


@pytest.mark.parametrize("call,message", [
    (lambda x: dsa.act_quant(x, scale_fmt="e8m0"), r"scale_fmt must be None or 'ue8m0', not 'e8m0'"),
    (lambda x: dsa.act_quant(x, block_size=100), r"block_size must be a power of two from 16 to 512, not 100"),
    (lambda x: dsa.act_quant(x, block_size=True), r"block_size must be a power of two from 16 to 512, not True"),
    (lambda x: dsa.act_quant(x.astype(np.int32)), r"x must be float32, float16 or bfloat16, not int32"),
    (lambda x: dsa.act_quant(x[:0]), r"x must have at least one dim and no empty one, not shape \(0, 128\)"),
])
def test_act_quant_errors_name_the_argument(call, message, rng):
    with pytest.raises(ValueError, match=message):
        call(rand((4, 128), "float32", rng))


@pytest.mark.parametrize("pow2_scale", [False, True])
def test_act_quant_builds_for_sm90a(pow2_scale):
    # DeepSeek-V3.2's shape: 4096 tokens of its 7168-wide hidden state. The power-of-two scale
    # is made from the bits, with no approximate log2 to land a power of two one step low.
    source = build_for_cuda(act_quant_kernel, "sm_90a", N=7168, dtype="bfloat16", pow2_scale=pow2_scale)
    assert ("reinterpret<float>" in source) == pow2_scale and "log2" not in source


def indexer_reference(q, k, k_scale, weights, ks, ke, max_len=None):
    """The indexer's logits in float64 from the float8 values, -inf outside each row's range;
    and the scale of each logit's terms (sum_h |w| |q . k| |k_scale|) for the tolerance."""
    scores = np.einsum("thd,sd->tsh", q.astype(np.float64), k.astype(np.float64))
    w = weights.astype(np.float64)[:, None, :]
    logits = (np.maximum(scores, 0) * w).sum(-1) * k_scale[None, :]
    scale = (np.abs(scores) * np.abs(w)).sum(-1) * np.abs(k_scale)[None, :]
    keys = np.arange(k.shape[0])[None, :]
    seen = (keys >= ks[:, None]) & (keys < ke[:, None])
    logits, scale = np.where(seen, logits, -np.inf), np.where(seen, scale, 0)
    if max_len is None:
        return logits, scale
    # compressed: column c of row t holds key max(ks[t], 0) + c
    columns = np.clip(ks, 0, None)[:, None] + np.arange(max_len)[None, :]
    inside = columns < k.shape[0]
    rows = np.arange(q.shape[0])[:, None]
    picked = np.where(inside, logits[rows, np.minimum(columns, k.shape[0] - 1)], -np.inf)
    return picked, np.where(inside, scale[rows, np.minimum(columns, k.shape[0] - 1)], 0)


def fp8_values(shape, rng):
    return rng.uniform(-2, 2, size=shape).astype(ml_dtypes.float8_e4m3fn)


@pytest.mark.parametrize("S,S_kv,H,D", [(1, 62, 16, 32), (37, 150, 16, 64), (62, 213, 64, 128)])
@pytest.mark.parametrize("ranges", ["causal", "ragged"])
@pytest.mark.parametrize("max_len", [None, 50])
def test_indexer_logits_against_float64(S, S_kv, H, D, ranges, max_len, rng):
    q, k = fp8_values((S, H, D), rng), fp8_values((S_kv, D), rng)
    k_scale = rng.uniform(0.5, 2, size=S_kv).astype(np.float32)
    weights = rand((S, H), "float32", rng)  # signs mixed, as the model's head weights
    if ranges == "causal":  # the queries are the last S of the S_kv tokens
        ks = np.zeros(S, np.int32)
        ke = (np.arange(S) + S_kv - S + 1).astype(np.int32)
    else:  # ranges reaching outside the keys, empty ones (ke <= ks) and whole ones mixed
        ks = rng.integers(-5, S_kv, size=S).astype(np.int32)
        ke = (ks + rng.integers(-3, S_kv + 10, size=S)).astype(np.int32)
        ks[0], ke[0] = 0, S_kv
    logits = to_numpy(dsa.indexer_logits(*on_target(q, k, k_scale, weights, ks, ke), max_len=max_len),
                      "float32")
    ref, scale = indexer_reference(q, k, k_scale, weights, ks, ke, max_len)
    assert logits.shape == ref.shape
    np.testing.assert_array_equal(np.isneginf(logits), np.isneginf(ref))
    assert np.all(np.isfinite(logits[np.isfinite(ref)]))
    finite = np.isfinite(ref)
    worst = np.max(np.abs(logits[finite] - ref[finite]) / (scale[finite] + 1e-30), initial=0)
    assert worst <= FP8_SUM_RTOL, f"error {worst:.2e} of the terms' magnitude"


def check_over_ragged_ranges(kernel, S, S_kv, H, D, max_len, rng, flat_heads=False, rtol=FP8_SUM_RTOL):
    """Runs indexer `kernel` on random heads and keys over ragged ranges (reaching outside the
    keys, empty ones, a whole one) and checks its logits against float64, to `rtol` of the
    magnitude of their terms. flat_heads: the kernel takes q as [S * H, D]."""
    q, k = fp8_values((S, H, D), rng), fp8_values((S_kv, D), rng)
    k_scale = rng.uniform(0.5, 2, size=S_kv).astype(np.float32)
    weights = rand((S, H), "float32", rng)
    ks = rng.integers(-5, S_kv, size=S).astype(np.int32)
    ke = (ks + rng.integers(-3, S_kv + 10, size=S)).astype(np.int32)
    ks[0], ke[0] = 0, S_kv
    heads = q.reshape(S * H, D) if flat_heads else q
    logits = to_numpy(kernel(*on_target(heads, k, k_scale, weights, ks, ke)), "float32")
    ref, scale = indexer_reference(q, k, k_scale, weights, ks, ke, max_len or None)
    np.testing.assert_array_equal(np.isneginf(logits), np.isneginf(ref))
    finite = np.isfinite(ref)
    assert np.max(np.abs(logits[finite] - ref[finite]) / (scale[finite] + 1e-30), initial=0) <= rtol


@pytest.mark.parametrize("S,S_kv,H,D", [(1, 62, 16, 32), (37, 150, 16, 64), (62, 213, 64, 128)])
@pytest.mark.parametrize("variant,stages", [("plain", 1), ("plain", 3), ("multicast", 2), ("multicast", 3),
                                            ("overlap", 3), ("arrive_free", 2), ("arrive_free", 3)])
@pytest.mark.parametrize("max_len", [0, 50])
def test_indexer_with_its_keys_by_tma_against_float64(S, S_kv, H, D, variant, stages, max_len, rng):
    # The Hopper indexer's own pipeline (keys and scales by TMA on mbarriers, thread 0 issuing
    # them stages - 1 steps ahead; one stage loads each step's keys right before it waits).
    # multicast: programs in clusters of two over the union of their queries' ranges, rank 0
    # loading each stage for both once both are done with it (S = 1 and 37 leave the last
    # cluster a program with no query). overlap: step n + 1's gemm issued into the other
    # accumulator before step n's head sums (odd and even step counts, one step). arrive_free:
    # each thread arrives at its stage's k_free mbarrier, thread 0 waiting for it before reloading.
    if ON_GPU:
        hopper_or_skip()
    kernel = indexer_logits_kernel(H, D, max_len=max_len, block_N=64, num_stages=stages, threads=128, queries=2,
                                   tma=True, multicast=variant == "multicast", overlap=variant == "overlap",
                                   arrive_free=variant == "arrive_free")
    check_over_ragged_ranges(kernel, S, S_kv, H, D, max_len, rng)


def test_indexer_overlap_needs_tma_and_three_stages():
    with pytest.raises(ValueError, match=r"overlap=True issues a step's gemm before the last step's head sums: it "
                                         r"needs tma=True, 3 or more stages"):
        indexer_logits_kernel(16, 64, queries=2, num_stages=2, tma=True, overlap=True)


def test_indexer_arrive_free_needs_tma_alone():
    with pytest.raises(ValueError, match=r"arrive_free=True frees each TMA stage by an mbarrier: it needs tma=True, and "
                                         r"neither multicast nor overlap"):
        indexer_logits_kernel(16, 64, queries=2, num_stages=3, tma=True, multicast=True, arrive_free=True)


def test_indexer_overlap_builds_for_sm90a():
    source = build_for_cuda(indexer_logits_kernel, "sm_90a", heads=64, dim=128,
                            **dict(INDEXER_TMA_CONFIG, block_N=64, overlap=True))
    # each gemm asynchronous into one of two accumulators; each step waits for all but the
    # gemm it just issued
    assert source.count("wgmma_gemm_ss<64, 128, 128, 1, 1, false, true, 128, 128, 0, 0, true, true>") == 4
    assert source.count("wgmma_wait<1>()") == 3 and source.count("wgmma_wait<0>()") == 2


def test_indexer_multicast_needs_tma():
    with pytest.raises(ValueError, match=r"multicast=True shares the keys' TMA loads between a cluster's programs: it "
                                         r"needs tma=True"):
        indexer_logits_kernel(16, 64, queries=2, multicast=True)


def test_indexer_multicast_builds_for_sm90a():
    source = build_for_cuda(indexer_logits_kernel, "sm_90a", heads=64, dim=128, **dict(INDEXER_TMA_CONFIG,
                                                                                          multicast=True))
    # the keys and their scales, one multicast each a stage, from rank 0
    assert source.count("tma_load_multicast(") == 4, source  # the prologue's and the loop's
    assert "tma_load(" not in source
    assert "__cluster_dims__(2, 1, 1)" in source


# ReLU(q . k) rounded to bfloat16 (the weights exact to 2^-16): an error of at most 2^-9 of each
# term, and the sum's own rounding
TENSOR_HEAD_SUM_RTOL = 2.0 ** -8


@pytest.mark.parametrize("S,S_kv,H,D,queries", [(1, 62, 16, 32, 2), (62, 213, 64, 128, 2), (37, 150, 16, 64, 3)])
@pytest.mark.parametrize("max_len", [0, 50])
def test_indexer_head_sums_on_the_tensor_cores_against_float64(S, S_kv, H, D, queries, max_len, rng):
    # tensor_head_sum: ReLU(scores) in bfloat16 times each query's weights (bfloat16 and what
    # rounding left) in one gemm from registers, query q's logits in its two columns
    if ON_GPU:
        hopper_or_skip()
    kernel = indexer_logits_kernel(H, D, max_len=max_len, block_N=64, num_stages=2, threads=128, queries=queries,
                                   tma=True, tensor_head_sum=True)
    check_over_ragged_ranges(kernel, S, S_kv, H, D, max_len, rng, rtol=TENSOR_HEAD_SUM_RTOL)


def test_indexer_head_sums_on_the_tensor_cores_take_up_to_4_queries():
    with pytest.raises(ValueError, match=r"tensor_head_sum takes up to 4 queries a program \(two columns each of the "
                                         r"gemm's 8\), not 5"):
        indexer_logits_kernel(16, 64, queries=5, tma=True, tensor_head_sum=True)


def test_indexer_head_sums_on_the_tensor_cores_build_for_sm90a():
    source = build_for_cuda(indexer_logits_kernel, "sm_90a", heads=64, dim=128,
                            **dict(INDEXER_TMA_CONFIG, tensor_head_sum=True))
    # the scores' fp8 gemm, then the head sums' bf16 gemm from registers over both queries' 128
    # columns into 8 (two a query), the ReLU and rounding one conversion a pair of scores
    assert source.count("wgmma_gemm_ss<128, 128, 128,") == 1
    assert source.count("wgmma_gemm_rs<128, 8, 128,") == 1
    assert "from_float_pair_relu((&relu[" in source


@pytest.mark.parametrize("max_len", [0, 50])
def test_indexer_programs_of_three_queries_over_ragged_ranges(max_len, rng):
    # 37 queries, 3 a program (the last program has one): each query's own range masks the
    # union's keys, and its own columns take them
    kernel = indexer_logits_kernel(16, 64, max_len=max_len, block_N=64, num_stages=1, threads=128, queries=3)
    check_over_ragged_ranges(kernel, 37, 150, 16, 64, max_len, rng)


@pytest.mark.parametrize("S,S_kv,H,D,queries", [(37, 150, 16, 64, 2), (62, 213, 64, 128, 2), (37, 150, 16, 64, 3)])
@pytest.mark.parametrize("max_len", [0, 50])
def test_the_hopper_indexer_against_float64(S, S_kv, H, D, queries, max_len, rng):
    if ON_GPU:
        hopper_or_skip()
    kernel = indexer_logits_hopper_kernel(H, D, max_len=max_len, block_N=64, stages=4, queries=queries)
    check_over_ragged_ranges(kernel, S, S_kv, H, D, max_len, rng, flat_heads=True)


def test_the_hopper_indexer_builds_for_sm90a():
    # DSA's: 64 heads of 128 dims, two queries a program
    source = build_for_cuda(indexer_logits_hopper_kernel, "sm_90a", heads=64, dim=128,
                            **INDEXER_HOPPER_CONFIG)
    # each consumer warpgroup's own gemm of a step's 64 keys against both queries' heads, the
    # keys and the heads loaded by TMA
    assert source.count("wgmma_gemm_ss<64, 128, 128") == 2
    assert source.count("tma_load(") == 2 and "mbarrier_wait_parity" in source
    # a consumer reads its queries' ranges once, before its steps, and a step's key scales
    # before the step's gemm (their loads wait under it)
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("//"))
    consumer = code[code.index("if (tx >= 0 && tx < 128)"):code.index("if (tx >= 128 && tx < 256)")]
    steps = consumer[consumer.index("for (int32_t m = 0"):]
    assert "KS[" in consumer and "KS[" not in steps and "KE[" not in steps
    assert steps.index("K_scale[") < steps.index("wgmma_gemm_ss<64, 128, 128")


@pytest.mark.parametrize("change,message", [
    (dict(q=np.zeros((4, 16, 32), np.float32)), r"q must be float8_e4m3, not float32"),
    (dict(k=fp8_values((9, 64), np.random.default_rng(1))), r"k has head dim 64 but q has 32"),
    (dict(k_scale=np.ones(8, np.float32)), r"k_scale must be float32 of shape \(9,\), not float32 of shape \(8,\)"),
    (dict(weights=np.ones((4, 16), np.float64)), r"weights must be float32 of shape \(4, 16\), not float64"),
    (dict(ke=np.ones(4, np.int64)), r"ke must be int32 of shape \(4,\), not int64"),
    (dict(max_len=0), r"max_len must be a positive int or None, not 0"),
    (dict(histogram=1), r"histogram must be True or False, not 1"),
    (dict(q=fp8_values((4, 12, 32), np.random.default_rng(1)), weights=np.ones((4, 12), np.float32)),
     r"the head dim must be a multiple of 32 and the heads of 16, not D = 32, H = 12"),
])
def test_indexer_errors_name_the_argument(change, message, rng):
    args = dict(q=fp8_values((4, 16, 32), rng), k=fp8_values((9, 32), rng), k_scale=np.ones(9, np.float32),
                weights=np.ones((4, 16), np.float32), ks=np.zeros(4, np.int32), ke=np.full(4, 9, np.int32))
    with pytest.raises(ValueError, match=message):
        dsa.indexer_logits(**(args | change))


@pytest.mark.parametrize("max_len,histogram", [(0, False), (2048, False), (0, True)])
def test_indexer_builds_for_sm90a_on_fp8_wgmma(max_len, histogram):
    # DeepSeek-V3.2's indexer: 64 heads of 128 dims.
    source = build_for_cuda(indexer_logits_kernel, "sm_90a", heads=64, dim=128,
                            max_len=max_len, histogram=histogram, **INDEXER_CONFIG)
    # one gemm of both queries' heads (N = 2 x 64), each query's sum over its 64 columns chosen by
    # slot alone (the range's guard has no thread index)
    queries = INDEXER_CONFIG["queries"]
    assert source.count("wgmma_gemm_ss<128, 128, 128,") == 1
    assert re.search(r"if \(0 <= \(\(s_\d+ >> 2\) & 15\) \* 8 && \(\(s_\d+ >> 2\) & 15\) \* 8 < 64\)", source)
    # a row's partial sums are on the 4 threads of a quad; the reduction leaves each row's logit
    # on one of them (3 shuffles a query, not 8), which alone masks, stores and counts it
    assert "if ((tx & 3) == 0)" not in source
    assert source.count("shfl_xor(") == 3 * queries


def test_the_hopper_indexer_loads_its_keys_by_tma_from_one_thread():
    source = build_for_cuda(indexer_logits_kernel, "sm_90a", heads=64, dim=128, **INDEXER_TMA_CONFIG)
    # a stage's keys (one 128 x 128 fp8 box) and scales (one row of 128) by TMA, in the
    # prologue's loop and the steps'; the heads and weights, loaded once, by cp.async
    assert source.count("tma_load(args.tensor_maps[0]") == source.count("tma_load(args.tensor_maps[1]") == 2
    assert not re.search(r"cp_async_16\([^;]*&K(_scale)?\[", source)
    assert source.count("wgmma_gemm_ss<128, 128, 128,") == 1


def order_keys(x):
    """float32 -> uint32 keys that order as the floats do, NaN above +inf and -0.0 equal to +0.0."""
    bits = x.astype(np.float32).view(np.uint32)
    keys = np.where(bits >> 31 != 0, ~bits, bits | np.uint32(0x80000000))
    keys = np.where(x == 0, np.uint32(0x80000000), keys)
    return np.where(np.isnan(x), np.uint32(0xFFFFFFFF), keys).astype(np.uint32)


def topk_reference(logits, k, ks, ke):
    """Each row's chosen columns as a set, by the documented rule: the k largest among
    [ks, ke), ties taking the lowest columns; and how many there are."""
    chosen = []
    for t in range(logits.shape[0]):
        start = min(max(ks[t], 0), logits.shape[1])
        end = max(min(ke[t], logits.shape[1]), start)
        columns = np.arange(start, end)
        order = np.lexsort((columns, ~order_keys(logits[t, start:end])))  # key down, then column up
        chosen.append(set(columns[order[:k]].tolist()))
    return chosen


@pytest.mark.parametrize("S,N,k", [(1, 62, 7), (7, 213, 64), (5, 1521, 100), (3, 4099, 2048)])
@pytest.mark.parametrize("values", ["random", "ties", "specials"])
def test_topk_indices_take_the_documented_set(S, N, k, values, rng):
    if values == "random":
        logits = rand((S, N), "float32", rng) * 10.0 ** rng.uniform(-3, 3, size=(S, N))
    elif values == "ties":  # few distinct values: ties straddle the k-th largest in every row
        logits = rng.integers(-3, 4, size=(S, N)).astype(np.float32) * 0.5
    else:  # NaN, +-inf, -0.0 and +0.0 among the values
        logits = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.5], np.float32), size=(S, N))
    logits = logits.astype(np.float32)
    ks = rng.integers(-3, N // 2, size=S).astype(np.int32)
    ke = (ks + rng.integers(-2, N + 5, size=S)).astype(np.int32)
    ks[0], ke[0] = 0, N  # one whole row; others ragged, empty or reaching past the row
    out = to_numpy(dsa.topk_indices(*on_target(logits), k, *on_target(ks, ke)), "int32")
    assert out.shape == (S, k) and out.dtype == np.int32
    for t, expected in enumerate(topk_reference(logits, k, ks, ke)):
        row = out[t]
        taken = row[row >= 0]
        assert len(taken) == len(expected) and set(taken.tolist()) == expected
        start = min(max(ks[t], 0), N)
        if max(min(ke[t], N), start) - start <= k:  # every valid column in order, then -1
            np.testing.assert_array_equal(row, sorted(expected) + [-1] * (k - len(expected)))


@pytest.mark.parametrize("candidates,threads,unroll", [(4, 64, 3), (4096, 32, 1)])
@pytest.mark.parametrize("values", ["random", "ties"])
def test_topk_kernel_takes_the_same_set_when_its_candidates_overflow(candidates, threads, unroll, values, rng):
    # Room for 4 candidates: rows whose first-round bin holds more read the row again for the
    # later rounds. 32 threads: each sums 128 of the first round's 4096 bins.
    S, N, k = 6, 1000, 150
    if values == "random":
        logits = (rand((S, N), "float32", rng) * 10.0 ** rng.uniform(-3, 3, size=(S, N))).astype(np.float32)
    else:
        logits = rng.integers(-3, 4, size=(S, N)).astype(np.float32) * 0.5
    ks = rng.integers(-3, 100, size=S).astype(np.int32)
    ke = (ks + rng.integers(k - 20, N, size=S)).astype(np.int32)
    kernel = topk_kernel(k, threads=threads, candidates=candidates, unroll=unroll)
    out = to_numpy(kernel(*on_target(logits, ks, ke)), "int32")
    for t, expected in enumerate(topk_reference(logits, k, ks, ke)):
        assert set(out[t][out[t] >= 0].tolist()) == expected


@pytest.mark.parametrize("guess_margin", [0, 2])
@pytest.mark.parametrize("values", ["gaussian", "sampled_largest", "ties"])
def test_topk_kernel_takes_the_same_set_whether_the_sample_guesses_well_or_not(guess_margin, values, rng):
    # Gaussian rows: the sample's bin holds the k (one pass). Rows whose largest keys are just
    # the sampled runs (each run 128 keys from column u * (valid // 2)): the guessed bin is above
    # the k-th largest key, so the row is read again. Few distinct values: more keys reach the
    # guessed bin than shared memory holds. guess_margin 0: no sample, always two passes.
    S, N, k, threads, unroll = 5, 6000, 300, 128, 2
    ks = np.array([0, 7, 1000, 0, 2500], np.int32)
    ke = np.array([N, 5990, 4100, 3000, N], np.int32)
    logits = rng.standard_normal((S, N)).astype(np.float32)
    if values == "sampled_largest":
        for t in range(S):
            stride = max((ke[t] - ks[t]) // unroll, threads)
            for u in range(unroll):
                logits[t, ks[t] + u * stride:ks[t] + u * stride + threads] += 100
    elif values == "ties":
        logits = rng.integers(-3, 4, size=(S, N)).astype(np.float32)
    kernel = topk_kernel(k, threads=threads, candidates=1024, unroll=unroll, guess_margin=guess_margin)
    out = to_numpy(kernel(*on_target(logits, ks, ke)), "int32")
    for t, expected in enumerate(topk_reference(logits, k, ks, ke)):
        assert set(out[t].tolist()) == expected


def test_topk_indices_and_sparse_prefill_write_into_given_outputs(rng):
    # The step writes each chunk's rows in place: rows 2-4 of larger outputs, the rest untouched.
    logits = rand((3, 90), "float32", rng)
    indices = np.full((6, 8), -7, np.int32)
    (indices_given,) = on_target(indices)
    returned = dsa.topk_indices(*on_target(logits), 8, out=indices_given[2:5])
    got = to_numpy(indices_given, "int32")
    assert np.all(got[[0, 1, 5]] == -7)
    for t, expected in enumerate(topk_reference(logits, 8, np.zeros(3, np.int32), np.full(3, 90, np.int32))):
        assert set(got[2 + t].tolist()) == expected
    assert set(to_numpy(returned, "int32")[0].tolist()) == set(got[2].tolist())
    q, kv = rand((3, 16, 96), "bfloat16", rng), rand((90, 1, 96), "bfloat16", rng)
    out, lse = on_target(np.full((6, 16, 64), np.nan, ml_dtypes.bfloat16), np.full((6, 16), np.nan, np.float32))
    picked = got[2:5].reshape(3, 1, 8)
    dsa.sparse_mla_prefill(*on_target(q, kv, picked), None, 64, out=(out[2:5], lse[2:5]))
    ref_out, ref_lse = dsa.sparse_mla_prefill(*on_target(q, kv, picked), None, 64)
    np.testing.assert_array_equal(to_numpy(out, "bfloat16")[2:5].astype(np.float32),
                                  to_numpy(ref_out, "bfloat16").astype(np.float32))
    np.testing.assert_array_equal(to_numpy(lse, "float32")[2:5], to_numpy(ref_lse, "float32"))
    assert np.all(np.isnan(to_numpy(lse, "float32")[[0, 1, 5]]))


@pytest.mark.parametrize("config", [dict(threads=96), dict(guess_margin=-1)])
def test_topk_kernel_refuses_a_config_it_cannot_take(config):
    with pytest.raises(ValueError, match="power-of-two threads >= 32.*guess_margin >= 0"):
        topk_kernel(8, **config)


def indexer_inputs_and_ranges(S, S_kv, H, D, ranges, rng):
    q, k = fp8_values((S, H, D), rng), fp8_values((S_kv, D), rng)
    k_scale = rng.uniform(0.5, 2, size=S_kv).astype(np.float32)
    weights = rand((S, H), "float32", rng)
    if ranges == "causal":
        ks, ke = np.zeros(S, np.int32), (np.arange(S) + S_kv - S + 1).astype(np.int32)
    else:
        ks = rng.integers(-5, S_kv, size=S).astype(np.int32)
        ke = (ks + rng.integers(-3, S_kv + 10, size=S)).astype(np.int32)
    return q, k, k_scale, weights, ks, ke


@pytest.mark.parametrize("ranges", ["causal", "ragged"])
def test_topk_from_the_indexers_histogram_takes_the_same_set(ranges, rng):
    # the fused path: the indexer counts top-k's first round as it scores, and top-k reads the
    # logits once
    S, S_kv, topk = 37, 700, 24
    q, k, k_scale, weights, ks, ke = indexer_inputs_and_ranges(S, S_kv, 16, 32, ranges, rng)
    logits, hist = dsa.indexer_logits(*on_target(q, k, k_scale, weights, ks, ke), histogram=True)
    values, counts = to_numpy(logits, "float32"), to_numpy(hist, "int32")
    for t in range(S):
        lo = min(max(ks[t], 0), S_kv)
        hi = max(min(ke[t], S_kv), lo)
        expected = np.bincount(order_keys(values[t, lo:hi]) >> 20, minlength=4096)
        np.testing.assert_array_equal(counts[t], expected, err_msg=f"row {t}")
    fused = to_numpy(dsa.topk_indices(logits, topk, *on_target(ks, ke), histogram=hist), "int32")
    plain = to_numpy(dsa.topk_indices(logits, topk, *on_target(ks, ke)), "int32")
    np.testing.assert_array_equal(np.sort(fused, axis=1), np.sort(plain, axis=1))


def test_topk_from_a_wrong_histogram_stays_inside_its_tensors(rng):
    # A histogram of other keys gives wrong indices, but each written slot names a column of the
    # row or -1, and nothing outside the output is written.
    S, S_kv, topk = 9, 700, 24
    logits = rand((S, S_kv), "float32", rng)
    hist = rng.integers(0, 50, size=(S, 4096)).astype(np.int32)
    out = np.full((S + 2, topk), -7, np.int32)
    logits, hist, out = on_target(logits, hist, out)
    dsa.topk_indices(logits, topk, histogram=hist, out=out[:S])
    got = to_numpy(out, "int32")
    assert np.all((got[:S] == -7) | ((got[:S] >= -1) & (got[:S] < S_kv)))
    assert np.all(got[S:] == -7)


def test_topk_indices_of_whole_rows_match_torch_topks_set(rng):
    # ks and ke left out: the whole row; random values, so no ties straddle the threshold
    logits = rand((4, 3000), "float32", rng) * 10.0 ** rng.uniform(-2, 2, size=(4, 3000))
    out = to_numpy(dsa.topk_indices(*on_target(logits.astype(np.float32)), 300), "int32")
    for t in range(4):
        assert set(out[t].tolist()) == set(np.argpartition(-logits[t], 300)[:300].tolist())


@pytest.mark.parametrize("call,message", [
    (lambda x: dsa.topk_indices(x[0], 4), r"logits must have 2 dims \[S, N\], not 1"),
    (lambda x: dsa.topk_indices(x.astype(np.float16), 4), r"logits must be float32, not float16"),
    (lambda x: dsa.topk_indices(x, 0), r"k must be a positive int, not 0"),
    (lambda x: dsa.topk_indices(x, 4, ks=np.zeros(3, np.int32)),
     r"ks must be int32 of shape \(2,\), not int32 of shape \(3,\)"),
    (lambda x: dsa.topk_indices(x, 4, ke=np.zeros(2, np.int64)), r"ke must be int32 of shape \(2,\), not int64"),
    (lambda x: dsa.topk_indices(x, 4, histogram=np.zeros((2, 2048), np.int32)),
     r"histogram must be int32 of shape \(2, 4096\), not int32 of shape \(2, 2048\)"),
])
def test_topk_errors_name_the_argument(call, message, rng):
    with pytest.raises(ValueError, match=message):
        call(rand((2, 16), "float32", rng))


@pytest.mark.parametrize("histogram", [False, True])
def test_topk_builds_for_sm90a(histogram):
    # DSA's shape: k = 2048 of 128K keys.
    source = build_for_cuda(topk_kernel, "sm_90a", k=2048, histogram=histogram,
                            **TOPK_CONFIG)
    assert "atomicAdd" in source or "atomic_add" in source


def sparse_mla_reference(q, kv, indices, sm_scale, d_v):
    """out and lse in float64: each row's softmax over its valid indices (repeats count each
    time); out 0 and lse +inf for a row with none."""
    S, heads, _ = q.shape
    out, lse = np.zeros((S, heads, d_v)), np.full((S, heads), np.inf)
    keys = kv[:, 0].astype(np.float64)
    for t in range(S):
        chosen = indices[t, 0]
        chosen = chosen[(chosen >= 0) & (chosen < kv.shape[0])]
        if not len(chosen):
            continue
        scores = q[t].astype(np.float64) @ keys[chosen].T * sm_scale
        top = scores.max(axis=1, keepdims=True)
        weights = np.exp(scores - top)
        out[t] = weights @ keys[chosen, :d_v] / weights.sum(axis=1, keepdims=True)
        lse[t] = (top + np.log(weights.sum(axis=1, keepdims=True)))[:, 0]
    return out, lse


# The 576-wide shapes take the warp-specialized kernel on Hopper: one step, an odd count of
# steps (the last stage's barriers unused), an even one, 64 and 128 heads (2 programs a token).
@pytest.mark.parametrize("S,S_kv,heads,d_qk,d_v,topk", [(2, 62, 16, 96, 64, 37), (7, 213, 32, 96, 64, 64),
                                                        (3, 1521, 16, 576, 512, 100), (4, 700, 64, 576, 512, 64),
                                                        (5, 4099, 128, 576, 512, 300), (3, 2048, 128, 576, 512, 512)])
def test_sparse_mla_prefill_against_float64(S, S_kv, heads, d_qk, d_v, topk, rng):
    check_sparse_prefill(lambda q, kv, indices: dsa.sparse_mla_prefill(q, kv, indices, d_v=d_v), S, S_kv, heads, d_qk,
                         d_v, topk, rng)


# The warp-specialized kernels by themselves (on a CPU, their thread groups take turns at their
# barriers). Hopper's: one step, an odd count of steps, an even one; the seesaw's, TileLang's pairs
# of steps: topk a multiple of 128, gathered by one warpgroup or two. 16 heads (one program, most
# heads past the end), 64, 128; DeepSeek's.
WARP_SPECIALIZED_PREFILLS = {"hopper": (sparse_mla_prefill_hopper_kernel, HOPPER_CONFIG),
                             "seesaw": (sparse_mla_prefill_seesaw_kernel, SEESAW_CONFIG),
                             "seesaw, 2 producers": (sparse_mla_prefill_seesaw_kernel, dict(SEESAW_CONFIG, producers=2))}


@pytest.mark.parametrize("kernel,S,S_kv,heads,topk", [
    ("hopper", 2, 300, 16, 37), ("hopper", 3, 1521, 16, 100), ("hopper", 4, 700, 64, 256),
    ("hopper", 5, 4099, 128, 300), ("hopper", 2, 8192, 128, 2048),
    ("seesaw", 3, 1521, 16, 128), ("seesaw", 4, 700, 64, 256), ("seesaw", 5, 4099, 128, 384),
    ("seesaw", 2, 8192, 128, 2048), ("seesaw, 2 producers", 3, 1521, 16, 128),
    ("seesaw, 2 producers", 5, 4099, 128, 384), ("seesaw, 2 producers", 2, 8192, 128, 2048)])
def test_the_warp_specialized_prefills_against_float64(kernel, S, S_kv, heads, topk, rng):
    if ON_GPU:
        hopper_or_skip()
    make, config = WARP_SPECIALIZED_PREFILLS[kernel]

    def prefill(q, kv, indices):
        return make(heads, 512, 64, topk, 576 ** -0.5, **config)(q, kv, indices.reshape(S, topk))

    check_sparse_prefill(prefill, S, S_kv, heads, 576, 512, topk, rng)


def test_the_seesaw_prefill_builds_for_sm90a():
    assert seesaw_fits(512, 64, 2048) and not seesaw_fits(512, 64, 2048 - 64) and not seesaw_fits(448, 128, 2048)
    with pytest.raises(ValueError, match=r"topk a multiple of 2 \* block_I \(pairs of steps\), not .* topk 1984"):
        sparse_mla_prefill_seesaw_kernel(128, 512, 64, 2048 - 64, 576 ** -0.5, **SEESAW_CONFIG)
    source = build_for_cuda(sparse_mla_prefill_seesaw_kernel, "sm_90a", heads=128, dim=512,
                            tail_dim=64, topk=2048, sm_scale=576 ** -0.5, **SEESAW_CONFIG)
    # each consumer: its step's scores (over the stage's two parts, the value's left half and the
    # rest, each once it has landed), its own P into its half of O from registers, the other's
    # from shared memory; warpgroup 0 scores its first pair's step apart, and each next one under
    # its last product. Each P goes to shared memory by stmatrix, warpgroup 0's into its stage's
    # RoPE panel.
    assert source.count("wgmma_gemm_ss<64, 64, 256") == 3 and source.count("wgmma_gemm_ss<64, 64, 320") == 3
    assert source.count("wgmma_gemm_rs<64, 256, 64") == 2 and source.count("wgmma_gemm_ss<64, 256, 64") == 2
    assert source.count("stmatrix_accumulator<64, 64") == 2
    assert source.count("setmaxnreg_inc<200>") == 2 and "setmaxnreg_dec<104>" in source
    assert source.count("tma_load(") == 9  # Q, a panel a load
    for producers in (0, 2.0, True):
        with pytest.raises(ValueError, match=f"producers is the seesaw prefill's gathering warpgroups, 1 or 2, not "
                                             f"{producers!r}"):
            sparse_mla_prefill_seesaw_kernel(128, 512, 64, 2048, 576 ** -0.5, producers=producers, **SEESAW_CONFIG)
    # two gathering warpgroups: 512 threads, m64n128 wgmmas (as the two-producer seesaw decode)
    source = build_for_cuda(sparse_mla_prefill_seesaw_kernel, "sm_90a", heads=128, dim=512, tail_dim=64, topk=2048,
                            sm_scale=576 ** -0.5, producers=2, **SEESAW_CONFIG)
    assert "__launch_bounds__(512)" in source and "#define TILEC_WGMMA_MAX_N 128" in source
    assert source.count("setmaxnreg_inc<200>") == 2 and "setmaxnreg_dec<56>" in source


@pytest.mark.parametrize("kernel", ["hopper", "seesaw", "seesaw, 2 producers"])
def test_the_warp_specialized_prefills_when_the_first_step_has_no_valid_key(kernel, rng):
    # Token 0's first step (warpgroup 0's in the seesaw) has no valid key, and every score is
    # far below 0 (q . k about -5000, -300 in exp2's units): what was summed under the max of
    # -inf is rescaled by 0, not by exp2(300) = inf (0 * inf is NaN).
    if ON_GPU:
        hopper_or_skip()
    make, config = WARP_SPECIALIZED_PREFILLS[kernel]
    S, S_kv, heads, topk = 2, 300, 16, 128
    q = (3 + rand((S, heads, 576), "float32", rng, -0.5, 0.5)).astype(ml_dtypes.bfloat16)
    kv = (-3 + rand((S_kv, 1, 576), "float32", rng, -0.5, 0.5)).astype(ml_dtypes.bfloat16)
    indices = rng.integers(0, S_kv, size=(S, 1, topk)).astype(np.int32)
    indices[0, 0, :64] = -1

    def prefill(q, kv, indices):
        return make(heads, 512, 64, topk, 576 ** -0.5, **config)(q, kv, indices.reshape(S, topk))

    compare_sparse_prefill(prefill, q, kv, indices, 512)


@pytest.mark.parametrize("kernel", ["hopper", "seesaw"])
def test_the_warp_specialized_prefills_when_the_max_rises_by_steps(kernel, rng):
    # Step n's keys are key level n's (scores near 35 c_n in exp2's units, c = 0.1, 0.12, 0.5,
    # 0.52, 1, 1.02): the max rises by under 2^8 in steps 1, 3 and 5, which keep the old max (the
    # Hopper kernel's lazy rescale), and far more in steps 2 and 4, which must rescale what came
    # before by about 2^-14 and 2^-17 (skipping it makes O wrong by those factors' inverses).
    if ON_GPU:
        hopper_or_skip()
    make, config = WARP_SPECIALIZED_PREFILLS[kernel]
    levels = np.array([0.1, 0.12, 0.5, 0.52, 1.0, 1.02])
    S, heads, topk = 2, 16, 64 * len(levels)
    q = (1 + rand((S, heads, 576), "float32", rng, -0.1, 0.1)).astype(ml_dtypes.bfloat16)
    kv = (np.repeat(levels, 64)[:, None, None] * (1 + rand((topk, 1, 576), "float32", rng, -0.5, 0.5)))
    kv = kv.astype(ml_dtypes.bfloat16)
    indices = np.broadcast_to(np.arange(topk, dtype=np.int32), (S, 1, topk)).copy()

    def prefill(q, kv, indices):
        return make(heads, 512, 64, topk, 576 ** -0.5, **config)(q, kv, indices.reshape(S, topk))

    compare_sparse_prefill(prefill, q, kv, indices, 512)


def check_sparse_prefill(prefill, S, S_kv, heads, d_qk, d_v, topk, rng):
    """prefill(q, kv, indices) -> (out, lse) against float64: causal indices with invalid ones
    mixed in, the last row with none valid."""
    q = rand((S, heads, d_qk), "bfloat16", rng, -1, 1)
    kv = rand((S_kv, 1, d_qk), "bfloat16", rng, -1, 1)
    # causal indices (each token its own keys) with invalid ones mixed in: -1, S_kv and past it,
    # huge values; the last row has none valid
    indices = rng.integers(0, S_kv, size=(S, 1, topk)).astype(np.int32)
    bad = rng.random((S, 1, topk)) < 0.2
    indices[bad] = rng.choice(np.array([-1, -7, S_kv, S_kv + 3, 2**31 - 1], np.int32), size=bad.sum())
    indices[-1] = -1
    compare_sparse_prefill(prefill, q, kv, indices, d_v)


def compare_sparse_prefill(prefill, q, kv, indices, d_v):
    """prefill(q, kv, indices) -> (out, lse) against float64: the same +inf lse, no NaN, out 0
    where a row has no valid index, DSA.md's judgement of bf16 outputs elsewhere."""
    sm_scale = 1 / np.sqrt(q.shape[-1])
    out, lse = prefill(*on_target(q, kv, indices))
    out, lse = to_numpy(out, "bfloat16").astype(np.float64), to_numpy(lse, "float32")
    ref_out, ref_lse = sparse_mla_reference(q, kv, indices, sm_scale, d_v)
    assert out.shape == ref_out.shape and lse.shape == ref_lse.shape
    np.testing.assert_array_equal(np.isposinf(lse), np.isposinf(ref_lse))
    assert np.all(out[np.isposinf(ref_lse)] == 0) and not np.isnan(out).any()
    finite = np.isfinite(ref_lse)
    assert np.max(np.abs(lse[finite] - ref_lse[finite]), initial=0) < 1e-4
    # DSA.md's judgement of bf16 attention outputs: 1 - 2 sum(a r) / sum(a^2 + r^2) <= 1e-5
    # (where some row has a valid index), and every element within bf16's rounding of the
    # row's scale
    if finite.any():
        assert 1 - 2 * np.sum(out * ref_out) / np.sum(out ** 2 + ref_out ** 2) <= 1e-5
    assert np.all(np.abs(out - ref_out) <= 2 ** -7 * np.abs(ref_out).max(axis=-1, keepdims=True) + 1e-6)


@pytest.mark.parametrize("change,message", [
    (dict(q=np.zeros((2, 16, 96), np.float32)), r"q must be bfloat16, not float32"),
    (dict(kv=np.zeros((9, 2, 96), ml_dtypes.bfloat16)), r"kv must be \[S_kv, 1, 96\] \(one latent KV a token"),
    (dict(indices=np.zeros((2, 1, 4), np.int64)), r"indices must be int32, not int64"),
    (dict(indices=np.zeros((3, 1, 4), np.int32)), r"indices must be \[2, 1, topk\] with topk >= 1, not \(3, 1, 4\)"),
    (dict(d_v=100), r"d_v must be a multiple of 16 below d_qk = 96, leaving a multiple of 16, not 100"),
    (dict(sm_scale=-1.0), r"sm_scale must be a positive finite number, not -1.0"),
])
def test_sparse_mla_errors_name_the_argument(change, message, rng):
    args = dict(q=rand((2, 16, 96), "bfloat16", rng), kv=rand((9, 1, 96), "bfloat16", rng),
                indices=np.zeros((2, 1, 4), np.int32), d_v=64)
    with pytest.raises(ValueError, match=message):
        dsa.sparse_mla_prefill(**(args | change))


@pytest.mark.parametrize("heads", [64, 128])
def test_sparse_mla_prefill_builds_for_sm90a(heads):
    # DeepSeek-V3.2's: 576 = 512 latent + 64 RoPE dims, topk 2048
    source = build_for_cuda(sparse_mla_prefill_kernel, "sm_90a", heads=heads, dim=512,
                            tail_dim=64, topk=2048, sm_scale=576 ** -0.5, **SPARSE_PREFILL_CONFIG)
    assert source.count("wgmma_gemm") == 3  # the latent scores, the RoPE tail's, P V
    # the next step's keys are gathered while this step's are attended to, each row's index read once a copy
    loop = source[source.index("for (int32_t k_stage_iter"):]
    assert loop.index("wgmma_gemm") < loop.index("cp_async_16(") < loop.index("cp_async_commit")
    assert all("Indices[" not in line for line in loop.splitlines() if "cp_async_16(" in line)


def test_the_hopper_prefill_takes_shapes_whose_tiles_fit():
    # DeepSeek's 512 + 64 dims; value halves not whole 64-wide panels; tiles past shared memory
    assert hopper_fits(512, 64)
    assert not hopper_fits(64, 32) and not hopper_fits(448, 64)
    assert not hopper_fits(512, 128)


@pytest.mark.parametrize("heads", [64, 128])
def test_sparse_mla_prefill_hopper_builds_for_sm90a(heads):
    source = build_for_cuda(sparse_mla_prefill_hopper_kernel, "sm_90a", heads=heads, dim=512,
                            tail_dim=64, topk=2048, sm_scale=576 ** -0.5, **HOPPER_CONFIG)
    # the scores over the stage's two parts (each gemm once its part has landed), each half of
    # P V in its own warpgroup
    assert source.count("wgmma_gemm_ss<64, 64, 256") == 1 and source.count("wgmma_gemm_ss<64, 64, 320") == 1
    assert source.count("wgmma_gemm_ss<64, 256, 64") == 2
    # warpgroup 0 waits for each part; the producer for each to be free
    assert source.count("mbarrier_wait_parity((&keys_ready[") == 2
    assert source.count("mbarrier_wait_parity((&keys_free[") == 2
    assert "setmaxnreg_inc<240>" in source and "setmaxnreg_dec<96>" in source
    assert "cp_async_mbarrier_arrive_noinc" in source


def test_causal_ranges_build_for_sm90a():
    assert "__global__" in build_for_cuda(causal_ranges_kernel, "sm_90a")


@pytest.mark.parametrize("lengths,chunk", [([(37, 62)], 4096), ([(5, 5), (1, 40), (30, 71)], 16)])
def test_attention_prefill_composes_the_indexer_top_k_and_sparse_mla(lengths, chunk, rng):
    # sequences of (queries, keys), packed; chunk 16 makes the logits three chunks
    S, S_kv = sum(n for n, _ in lengths), sum(n for _, n in lengths)
    H, D, heads, d_qk, d_v, topk = 16, 32, 16, 96, 64, 24
    index_q, index_k = fp8_values((S, H, D), rng), fp8_values((S_kv, D), rng)
    k_scale = rng.uniform(0.5, 2, size=S_kv).astype(np.float32)
    weights = rand((S, H), "float32", rng)
    q, kv = rand((S, heads, d_qk), "bfloat16", rng, -1, 1), rand((S_kv, 1, d_qk), "bfloat16", rng, -1, 1)
    cu_q = np.cumsum([0] + [n for n, _ in lengths]).astype(np.int32)
    cu_kv = np.cumsum([0] + [n for _, n in lengths]).astype(np.int32)
    sequences = dict(cu_seqlens_q=cu_q, cu_seqlens_kv=cu_kv) if len(lengths) > 1 else {}
    out, lse, indices = dsa.attention_prefill(*on_target(index_q, weights, index_k, k_scale, q, kv),
                                              **{name: on_target(v)[0] for name, v in sequences.items()},
                                              topk=topk, d_v=d_v, chunk=chunk)
    out, lse = to_numpy(out, "bfloat16").astype(np.float64), to_numpy(lse, "float32")
    indices = to_numpy(indices, "int32")
    # each token's causal range in its sequence, bottom-right
    ks, ke = np.zeros(S, np.int32), np.zeros(S, np.int32)
    for b, (n_q, n_kv) in enumerate(lengths):
        for i in range(n_q):
            ks[cu_q[b] + i], ke[cu_q[b] + i] = cu_kv[b], cu_kv[b] + i + 1 + n_kv - n_q
    logits = to_numpy(dsa.indexer_logits(*on_target(index_q, index_k, k_scale, weights, ks, ke)), "float32")
    for t, expected in enumerate(topk_reference(logits, topk, ks, ke)):
        assert set(indices[t][indices[t] >= 0].tolist()) == expected
        assert np.sum(indices[t] >= 0) == min(topk, ke[t] - ks[t])
    ref_out, ref_lse = sparse_mla_reference(q, kv, indices[:, None, :], 1 / np.sqrt(d_qk), d_v)
    assert np.max(np.abs(lse - ref_lse)) < 1e-4
    assert 1 - 2 * np.sum(out * ref_out) / np.sum(out ** 2 + ref_out ** 2) <= 1e-5


def test_attention_prefill_errors_name_the_argument(rng):
    args = [fp8_values((4, 16, 32), rng), rand((4, 16), "float32", rng), fp8_values((9, 32), rng),
            np.ones(9, np.float32), rand((4, 16, 96), "bfloat16", rng), rand((9, 1, 96), "bfloat16", rng)]
    with pytest.raises(ValueError, match="cu_seqlens_q and cu_seqlens_kv go together"):
        dsa.attention_prefill(*args, cu_seqlens_q=np.array([0, 4], np.int32), d_v=64)
    with pytest.raises(ValueError, match=r"cu_seqlens_kv must be int32 \[B \+ 1\] with B >= 1, not int64"):
        dsa.attention_prefill(*args, cu_seqlens_q=np.array([0, 4], np.int32),
                              cu_seqlens_kv=np.array([0, 9], np.int64), d_v=64)
    with pytest.raises(ValueError, match="q and kv must have index_q's 4 and index_k's 9 tokens, not 3 and 9"):
        dsa.attention_prefill(*args[:4], args[4][:3], args[5], d_v=64)
    with pytest.raises(ValueError, match="chunk must be a positive int, not 0"):
        dsa.attention_prefill(*args, chunk=0, d_v=64)


def fp8_cache(pages, page_size, rng):
    """DeepSeek-V3.2's FP8 KV cache of random tokens, [pages, page_size, 656] bytes, and each
    token's dequantized key (576 dims: value * scale rounded to bfloat16, then RoPE) in float64."""
    slots = pages * page_size
    values = rng.uniform(-1, 1, size=(slots, 512)).astype(ml_dtypes.float8_e4m3fn)
    scales = np.exp2(rng.integers(-4, 4, size=(slots, 4))).astype(np.float32)  # powers of two, as DeepSeek's
    rope = rand((slots, 64), "bfloat16", rng, -1, 1)
    cache = np.concatenate([values.view(np.uint8), scales.view(np.uint8), rope.view(np.uint8)], axis=1)
    latent = (values.astype(np.float32) * np.repeat(scales, 128, axis=1)).astype(ml_dtypes.bfloat16)
    keys = np.concatenate([latent.astype(np.float64), rope.astype(np.float64)], axis=1)
    return cache.reshape(pages, page_size, 656), keys


DECODE_SHAPES = [(2, 1, 16, 3, 37), (3, 2, 32, 7, 64), (2, 2, 64, 5, 200), (1, 2, 128, 9, 130)]


def check_sparse_decode(decode, B, s_q, heads, pages, topk, cache_dims, rng):
    """decode(q, kv_cache, indices) -> (out, lse) against float64, on random tokens, invalid
    indices mixed in and a query with none."""
    page_size = 64  # DSA's pages
    cache, keys = fp8_cache(pages, page_size, rng)
    if cache_dims == 4:
        cache = cache[:, :, None, :]
    q = rand((B, s_q, heads, 576), "bfloat16", rng, -1, 1)
    slots = pages * page_size
    indices = rng.integers(0, slots, size=(B, s_q, topk)).astype(np.int32)
    bad = rng.random(indices.shape) < 0.2
    indices[bad] = rng.choice(np.array([-1, slots, slots + 64, 2**31 - 1], np.int32), size=bad.sum())
    indices[-1, -1] = -1  # a query with no valid slot
    out, lse = decode(*on_target(q, cache, indices))
    out, lse = to_numpy(out, "bfloat16").astype(np.float64), to_numpy(lse, "float32")
    assert out.shape == (B, s_q, heads, 512) and lse.shape == (B, heads, s_q)
    ref_out, ref_lse = sparse_mla_reference(q.reshape(B * s_q, heads, 576), keys[:, None, :].astype(ml_dtypes.bfloat16),
                                            indices.reshape(B * s_q, 1, topk), 576 ** -0.5, 512)
    ref_out, ref_lse = ref_out.reshape(out.shape), ref_lse.reshape(B, s_q, heads).transpose(0, 2, 1)
    np.testing.assert_array_equal(np.isposinf(lse), np.isposinf(ref_lse))
    assert np.all(out[-1, -1] == 0)
    finite = np.isfinite(ref_lse)
    assert np.max(np.abs(lse[finite] - ref_lse[finite]), initial=0) < 1e-4
    assert 1 - 2 * np.sum(out * ref_out) / np.sum(out ** 2 + ref_out ** 2) <= 1e-5
    assert np.all(np.abs(out - ref_out) <= 2 ** -7 * np.abs(ref_out).max(axis=-1, keepdims=True) + 1e-6)


@pytest.mark.parametrize("B,s_q,heads,pages,topk", DECODE_SHAPES)
@pytest.mark.parametrize("cache_dims", [3, 4])
def test_sparse_mla_decode_over_the_fp8_cache_against_float64(B, s_q, heads, pages, topk, cache_dims, rng):
    check_sparse_decode(dsa.sparse_mla_decode, B, s_q, heads, pages, topk, cache_dims, rng)


def decode_by(make_kernel):
    """sparse_mla_decode's call made with the Hopper decode kernel make_kernel(s_q, heads, topk)
    builds: q's and the indices' query rows flattened, the cache as bytes and its views."""
    def decode(q, kv_cache, indices):
        B, s_q, heads, _ = q.shape
        cache = kv_cache.reshape(-1, FP8_TOKEN_BYTES)
        kernel = make_kernel(s_q, heads, indices.shape[-1])
        out, lse = kernel(q.reshape(B * s_q, heads, 576), cache, *scales_and_rope(cache),
                          indices.reshape(B * s_q, -1))
        return out.reshape(B, s_q, heads, 512), lse
    return decode


# The crossover pairs a token's two head blocks: heads of a whole number of pairs of 64.
CROSSOVER_SHAPES = [(1, 2, 128, 9, 130), (3, 1, 128, 5, 37), (2, 2, 100, 7, 200), (2, 1, 256, 3, 64)]


@pytest.mark.parametrize("variant,B,s_q,heads,pages,topk",
                         [(variant, *shape) for variant in ("plain", "split") for shape in DECODE_SHAPES] +
                         [("crossover", *shape) for shape in CROSSOVER_SHAPES] +
                         [(variant, 1, 2, 128, 130, 2048) for variant in ("plain", "crossover", "split")])  # DeepSeek's
def test_the_hopper_sparse_decode_over_the_fp8_cache_against_float64(variant, B, s_q, heads, pages, topk, rng):
    # crossover: a cluster of a token's two head blocks, each dequantizing half of every step's
    # tokens into both programs' shared memory (the CPU runs the cluster's programs as fibers).
    # split: warpgroup 1 dequantizes the right half of each step's values, two steps ahead (one
    # step, an odd count, a multiple of two among the shapes)
    if ON_GPU:
        hopper_or_skip()
    decode = decode_by(lambda s_q, heads, topk: sparse_mla_decode_hopper_kernel(
        s_q, heads, topk, 576 ** -0.5, crossover=variant == "crossover", split_dequant=variant == "split",
        **HOPPER_CONFIG))
    check_sparse_decode(decode, B, s_q, heads, pages, topk, 3, rng)


@pytest.mark.parametrize("B,s_q,heads,pages,topk,programs", [
    (2, 2, 128, 9, 128, 3),  # 8 units over 3 programs: 3, 3 and 2 each
    (3, 1, 64, 7, 256, 2),  # 3 units of one head block
    (2, 1, 64, 3, 128, 4),  # programs with no unit
    (1, 2, 128, 130, 2048, 3)])  # DeepSeek's
def test_the_persistent_decode_over_the_fp8_cache_against_float64(B, s_q, heads, pages, topk, programs, rng):
    # Each program takes the units (a token's head block) program, program + programs, ..; a
    # unit's first steps are filled under the last one's
    if ON_GPU:
        hopper_or_skip()
    decode = decode_by(lambda s_q, heads, topk: sparse_mla_decode_hopper_kernel(
        s_q, heads, topk, 576 ** -0.5, split_dequant=True, programs=programs, **HOPPER_CONFIG))
    check_sparse_decode(decode, B, s_q, heads, pages, topk, 3, rng)


def test_the_persistent_decode_refuses_what_it_does_not_take():
    with pytest.raises(ValueError, match="the persistent decode \\(programs=\\) takes split_dequant=True"):
        sparse_mla_decode_hopper_kernel(2, 128, 2048, 576 ** -0.5, programs=132, **HOPPER_CONFIG)
    with pytest.raises(ValueError, match="at least 1 program, not 0"):
        sparse_mla_decode_hopper_kernel(2, 128, 2048, 576 ** -0.5, split_dequant=True, programs=0, **HOPPER_CONFIG)
    with pytest.raises(ValueError, match="topk 192 makes 3 steps of 64"):
        sparse_mla_decode_hopper_kernel(2, 128, 192, 576 ** -0.5, split_dequant=True, programs=132, **HOPPER_CONFIG)


@pytest.mark.parametrize("producers", [1, 2])
@pytest.mark.parametrize("B,s_q,heads,pages,topk", [(2, 1, 16, 3, 128), (2, 2, 64, 5, 256), (1, 2, 128, 9, 384),
                                                    (1, 2, 128, 130, 2048)])
def test_the_seesaw_decode_over_the_fp8_cache_against_float64(B, s_q, heads, pages, topk, producers, rng):
    # The seesaw's consumers over the producer's dequantized parts (one pair, two, three;
    # DeepSeek's topk), dequantized by one warpgroup or two: invalid tokens, a query with none
    if ON_GPU:
        hopper_or_skip()
    decode = decode_by(lambda s_q, heads, topk: sparse_mla_decode_seesaw_kernel(
        s_q, heads, topk, 576 ** -0.5, producers=producers, **SEESAW_CONFIG))
    check_sparse_decode(decode, B, s_q, heads, pages, topk, 3, rng)


def test_the_seesaw_decode_builds_for_sm90a():
    with pytest.raises(ValueError, match="topk a multiple of 2 \\* block_I"):
        sparse_mla_decode_seesaw_kernel(2, 128, 2048 - 64, 576 ** -0.5, **SEESAW_CONFIG)
    source = build_for_cuda(sparse_mla_decode_seesaw_kernel, "sm_90a", s_q=2, heads=128, topk=2048,
                            sm_scale=576 ** -0.5, **SEESAW_CONFIG)
    consumers, producer = source.split("setmaxnreg_dec<104>")
    # a part's bytes are loaded before the wait for it to be free; the RoPE dims by cp.async
    assert producer.index("load_vector_or_zero<16>") < producer.index("mbarrier_wait_parity((&keys_free[")
    assert "cp_async_16" in producer and "cp_async_16" not in consumers
    with pytest.raises(ValueError, match="producers is the seesaw decode's dequantizing warpgroups, 1 or 2, not 3"):
        sparse_mla_decode_seesaw_kernel(2, 128, 2048, 576 ** -0.5, producers=3, **SEESAW_CONFIG)
    # two producer warpgroups: 512 threads launch with 128 registers a thread, too few for ptxas
    # to take an m64n256 wgmma, so the source asks for m64n128s
    source = build_for_cuda(sparse_mla_decode_seesaw_kernel, "sm_90a", s_q=2, heads=128, topk=2048,
                            sm_scale=576 ** -0.5, producers=2, **SEESAW_CONFIG)
    assert "__launch_bounds__(512)" in source and "#define TILEC_WGMMA_MAX_N 128" in source
    assert "setmaxnreg_inc<200>" in source and "setmaxnreg_dec<56>" in source


def test_the_crossover_decode_takes_pairs_of_head_blocks():
    with pytest.raises(ValueError, match="64 heads make 1 blocks of 64, not an even number"):
        sparse_mla_decode_hopper_kernel(2, 64, 2048, 576 ** -0.5, crossover=True, **HOPPER_CONFIG)


def test_sparse_mla_decode_crossover_builds_for_sm90a():
    source = build_for_cuda(sparse_mla_decode_hopper_kernel, "sm_90a", s_q=2, heads=128, topk=2048,
                            sm_scale=576 ** -0.5, crossover=True, **HOPPER_CONFIG)
    assert "__cluster_dims__(2, 1, 1)" in source
    producer = source[source.index("setmaxnreg_dec<96>"):]
    # half a step's tokens a program: one load of 16 FP8 values a chunk, 8 chunks
    assert producer.count("load_vector_or_zero<16>((&raw[") == 1 and "for (int32_t c = 0; c < 8; ++c)" in producer
    # each part's rows go to the peer 16 bytes at a time by st.async, counted on its keys_ready
    # (as are the key biases of part 0), after one arrival a copy that adds the bytes
    assert producer.count("copy_to_block_async<16>((&KV_shared[") == 2
    assert producer.count("copy_to_block_async<4>((&key_bias[") == 1
    assert producer.count("mbarrier_arrive_expect_tx_in_block((&keys_ready[") == 3
    # the consumers free a stage part in both programs
    consumers = source[:source.index("setmaxnreg_dec<96>")]
    assert consumers.count("mbarrier_arrive_in_block((&keys_free[") == 2
    assert source.rstrip().endswith("tilec_cuda::cluster_sync();\n}")


def test_the_split_decode_builds_for_sm90a():
    with pytest.raises(ValueError, match="crossover=True or split_dequant=True, not both"):
        sparse_mla_decode_hopper_kernel(2, 128, 2048, 576 ** -0.5, crossover=True, split_dequant=True, **HOPPER_CONFIG)
    source = build_for_cuda(sparse_mla_decode_hopper_kernel, "sm_90a", s_q=2, heads=128, topk=2048,
                            sm_scale=576 ** -0.5, split_dequant=True, **HOPPER_CONFIG)
    # warpgroup 1 grows to 200 registers for its loaded bytes, the producer gives up to 72
    assert "setmaxnreg_inc<232>" in source and "setmaxnreg_inc<200>" in source and "setmaxnreg_dec<72>" in source
    consumers, producer = source.split("setmaxnreg_dec<72>")
    # warpgroup 1's product of a step is left in flight while it loads the bytes of the step two
    # ahead; the producer loads a step's before it waits for the stage, and once the stage is
    # free prefetches the step after next's tokens into L2 (6 lines a token, from 2 threads)
    right = consumers[consumers.index("setmaxnreg_inc<200>"):]
    product = right.index("wgmma_gemm_ss")
    assert product < right.index("load_vector_or_zero<16>", product) < right.index("wgmma_wait<0>", product)
    wait = producer.index("mbarrier_wait_parity((&keys_free[")
    assert producer.index("load_vector_or_zero<16>") < wait < producer.index("prefetch_l2(", wait)
    assert "prefetch_l2(" not in consumers
    # warpgroup 1 copies the RoPE dims (cp.async), the producer none
    assert "cp_async_16" in right and "cp_async_16" not in producer


@pytest.mark.parametrize("topk,taken", [(256, "seesaw"), (100, "hopper")])
def test_sparse_mla_prefill_takes_the_seesaw_on_hopper_where_it_fits(topk, taken, rng, monkeypatch):
    # On Hopper the seesaw is the default where it fits (pairs of 64-key steps: topk a multiple
    # of 128), the Hopper kernel elsewhere; the CPU runs both, so the choice is checked here by
    # its result.
    from tilec.ops.dsa import sparse_mla

    if ON_GPU:
        hopper_or_skip()
    calls = []
    for name in ("hopper", "seesaw"):
        attribute = f"sparse_mla_prefill_{name}_kernel"
        kernel = getattr(sparse_mla, attribute)
        monkeypatch.setattr(sparse_mla, attribute, lambda *a, name=name, kernel=kernel, **kw: calls.append(name)
                            or kernel(*a, **kw))
    monkeypatch.setattr(sparse_mla, "is_hopper", lambda tensor: True)
    check_sparse_prefill(dsa.sparse_mla_prefill, 2, 300, 16, 576, 512, topk, rng)
    assert calls == [taken]


def test_sparse_mla_decode_takes_the_hopper_kernel_on_hopper(rng, monkeypatch):
    # On Hopper the warp-specialized decode, its dequantization split (split_dequant), is the
    # default (1.6x the T.Pipelined one on the H200); the CPU backend runs it too, so the choice
    # is checked here by its result.
    from tilec.ops.dsa import sparse_mla

    if ON_GPU:
        hopper_or_skip()
    calls = []
    hopper = sparse_mla.sparse_mla_decode_hopper_kernel
    monkeypatch.setattr(sparse_mla, "is_hopper", lambda tensor: True)
    monkeypatch.setattr(sparse_mla, "sparse_mla_decode_hopper_kernel",
                        lambda *a, **kw: calls.append(kw) or hopper(*a, **kw))
    check_sparse_decode(dsa.sparse_mla_decode, 2, 2, 16, 3, 37, 3, rng)
    assert len(calls) == 1 and calls[0]["split_dequant"]


@pytest.mark.parametrize("change,message", [
    (dict(q=np.zeros((1, 1, 16, 512), ml_dtypes.bfloat16)), r"q must be \[B, s_q, h_q, 576\], not \(1, 1, 16, 512\)"),
    (dict(kv_cache=np.zeros((2, 64, 648), np.uint8)), r"kv_cache must be \[num_pages, page_size, 656\]"),
    (dict(kv_cache=np.zeros((2, 64, 656), np.int8)), r"kv_cache must be uint8 \(or float8_e4m3\) bytes, not int8"),
    (dict(indices=np.zeros((1, 2, 4), np.int32)), r"indices must be \[1, 1, topk\] with topk >= 1, not \(1, 2, 4\)"),
])
def test_sparse_mla_decode_errors_name_the_argument(change, message, rng):
    args = dict(q=rand((1, 1, 16, 576), "bfloat16", rng), kv_cache=np.zeros((2, 64, 656), np.uint8),
                indices=np.zeros((1, 1, 4), np.int32))
    with pytest.raises(ValueError, match=message):
        dsa.sparse_mla_decode(**(args | change))


def test_sparse_mla_decode_builds_for_sm90a():
    # FlashMLA's benchmark shape: b = 128, s_q = 2, h_q = 128, topk 2048
    source = build_for_cuda(sparse_mla_decode_kernel, "sm_90a", s_q=2, heads=128, topk=2048,
                            sm_scale=576 ** -0.5, **SPARSE_MLA_CONFIG)
    assert source.count("wgmma_gemm") == 3


def test_sparse_mla_decode_hopper_builds_for_sm90a():
    source = build_for_cuda(sparse_mla_decode_hopper_kernel, "sm_90a", s_q=2, heads=128, topk=2048,
                            sm_scale=576 ** -0.5, **HOPPER_CONFIG)
    # the consumers are the prefill's: the scores over the stage's two parts, each half of P V
    assert source.count("wgmma_gemm_ss<64, 64, 256") == 1 and source.count("wgmma_gemm_ss<64, 64, 320") == 1
    assert source.count("wgmma_gemm_ss<64, 256, 64") == 2
    assert "setmaxnreg_inc<240>" in source and "setmaxnreg_dec<96>" in source
    # the producer: a token's 4 scales in one load (then rounded to bfloat16), 16 FP8 values a
    # load (each straight into the thread's registers), all a step's loads before its stores of
    # 8 bfloat16 each, the next step's slots read in between, and one barrier of its own every
    # two steps (the stores of one iteration never meet another's: insert_barriers proves them
    # apart). The values times their scale four at a time in bf16x2 multiplies
    producer = source[source.index("setmaxnreg_dec<96>"):]
    assert "load_vector_or_zero<4>((&Scales_run[0])" in producer
    assert producer.count("load_vector_or_zero<16>((&raw[") == 1
    assert producer.count("tilec_cuda::e4m3_quad_times((&KV_shared_run") == 2
    assert "e4m3_pair_to_float" not in producer
    loads = producer[producer.index("load_vector_or_zero<16>((&raw["):]
    assert loads.index("Indices[") < loads.index("store_vector<8>((&KV_shared")
    assert producer.count("sync_threads_partial") == 1
    assert "cp_async_16" in producer and "fence_proxy_async" in producer


def indexer_cache(pages, D, rng):
    """A paged indexer key cache of random keys, [pages, 64, 1, D + 4] bytes (a page: its 64
    keys' float8 values, then their float32 scales), with the keys and scales it holds."""
    keys = fp8_values((pages, 64, D), rng)
    scales = rng.uniform(0.5, 2, size=(pages, 64)).astype(np.float32)
    data = np.concatenate([keys.view(np.uint8).reshape(pages, -1), scales.view(np.uint8)], axis=1)
    return data.reshape(pages, 64, 1, D + 4), keys, scales


@pytest.mark.parametrize("B,next_n,H,D", [(1, 1, 16, 32), (3, 2, 16, 64)])
def test_indexer_decode_logits_over_pages_against_float64(B, next_n, H, D, rng):
    pages, max_pages = 9, 4
    cache, keys, scales = indexer_cache(pages, D, rng)
    q = fp8_values((B, next_n, H, D), rng)
    weights = rand((B * next_n, H), "float32", rng)
    block_table = rng.integers(0, pages, size=(B, max_pages)).astype(np.int32)  # pages may be shared
    block_table[-1, -1] = pages + 5  # a page id outside the cache: its keys are masked
    context_lens = rng.integers(1, max_pages * 64 + 1, size=B).astype(np.int32)
    context_lens[-1] = max_pages * 64
    logits = to_numpy(dsa.indexer_decode_logits(*on_target(q, cache, weights, block_table, context_lens)), "float32")
    assert logits.shape == (B * next_n, max_pages * 64)
    for b in range(B):
        for j in range(next_n):
            row = b * next_n + j
            seen = np.arange(max_pages * 64) <= context_lens[b] - next_n + j
            page_ids = block_table[b, np.arange(max_pages * 64) // 64]
            readable = page_ids < pages
            page_keys = keys[np.minimum(page_ids, pages - 1), np.arange(max_pages * 64) % 64].astype(np.float64)
            page_scales = scales[np.minimum(page_ids, pages - 1), np.arange(max_pages * 64) % 64]
            scores = page_keys @ q[b, j].astype(np.float64).T  # [keys, H]
            ref = (np.maximum(scores, 0) * weights[row]).sum(-1) * page_scales
            ref = np.where(seen & readable, ref, -np.inf)
            np.testing.assert_array_equal(np.isneginf(logits[row]), np.isneginf(ref))
            finite = np.isfinite(ref)
            bound = FP8_SUM_RTOL * (np.abs(scores) * np.abs(weights[row])).sum(-1) * page_scales + 1e-30
            assert np.all(np.abs(logits[row][finite] - ref[finite]) <= bound[finite])


def test_indexer_decode_builds_for_sm90a():
    # DSA's decode: 64 heads of 128 dims, next_n 2, 64-token pages
    source = build_for_cuda(indexer_decode_kernel, "sm_90a", next_n=2, heads=64, dim=128)
    assert "wgmma_gemm_ss" in source


@pytest.mark.parametrize("change,message", [
    (dict(kv_cache=np.zeros((2, 64, 1, 40), np.uint8)), r"kv_cache must be uint8 pages of 2304 bytes"),
    (dict(kv_cache=np.zeros((2, 64, 1, 36), np.int8)), r"kv_cache must be uint8 pages of 2304 bytes .* not int8"),
    (dict(block_table=np.zeros((2, 3), np.int32)), r"block_table must be int32 \[1, max_pages\], not int32 of shape"),
    (dict(context_lens=np.zeros(1, np.int64)), r"context_lens must be int32 of shape \(1,\), not int64"),
    (dict(weights=np.zeros((1, 16), np.float32)), r"weights must be float32 of shape \(2, 16\)"),
])
def test_indexer_decode_errors_name_the_argument(change, message, rng):
    args = dict(q=fp8_values((1, 2, 16, 32), rng), kv_cache=np.zeros((2, 64, 1, 36), np.uint8),
                weights=np.ones((2, 16), np.float32), block_table=np.zeros((1, 3), np.int32),
                context_lens=np.ones(1, np.int32))
    with pytest.raises(ValueError, match=message):
        dsa.indexer_decode_logits(**(args | change))


def test_topk_indices_as_physical_slots_for_decoding(rng):
    # 2 sequences, next_n 2: rows 0-1 are sequence 0's queries, 2-3 sequence 1's
    logits = rand((4, 300), "float32", rng) * 10.0 ** rng.uniform(-2, 2, size=(4, 300))
    logits = logits.astype(np.float32)
    ke = np.array([250, 251, 30, 31], np.int32)  # sequence 1 has fewer than k tokens: -1 slots
    block_table = rng.permutation(20)[:10].reshape(2, 5).astype(np.int32)
    columns = to_numpy(dsa.topk_indices(*on_target(logits), 40, ke=on_target(ke)[0]), "int32")
    slots = to_numpy(dsa.topk_indices(*on_target(logits), 40, ke=on_target(ke)[0],
                                      block_table=on_target(block_table)[0], next_n=2), "int32")
    expected = np.where(columns >= 0, block_table[np.arange(4)[:, None] // 2, np.maximum(columns, 0) // 64] * 64
                        + columns % 64, -1)
    for r in range(4):  # the two calls may order a row's k differently
        assert sorted(slots[r].tolist()) == sorted(expected[r].tolist())
    assert (slots[2:] == -1).sum() == (40 - 30) + (40 - 31)  # rows of 30 and 31 tokens
    with pytest.raises(ValueError, match=r"next_n must be a positive int dividing the 4 rows, not 3"):
        dsa.topk_indices(logits, 4, block_table=block_table, next_n=3)
    with pytest.raises(ValueError, match=r"block_table must be int32 \[2, max_pages\], not int32 of shape \(3, 5\)"):
        dsa.topk_indices(logits, 4, block_table=np.zeros((3, 5), np.int32), next_n=2)


def test_attention_decode_composes_the_paged_indexer_top_k_and_fp8_sparse_mla(rng):
    B, next_n, H, D, heads, topk, pages, max_pages = 2, 2, 16, 32, 16, 48, 8, 3
    index_cache, index_keys, index_scales = indexer_cache(pages, D, rng)
    kv_cache, keys = fp8_cache(pages, 64, rng)
    index_q, weights = fp8_values((B, next_n, H, D), rng), rand((B * next_n, H), "float32", rng)
    q = rand((B, next_n, heads, 576), "bfloat16", rng, -1, 1)
    block_table = rng.permutation(pages)[:B * max_pages].reshape(B, max_pages).astype(np.int32)
    context_lens = np.array([150, 40], np.int32)  # sequence 1's queries see fewer than topk tokens
    args = on_target(index_q, weights, index_cache, q, kv_cache, block_table, context_lens)
    out, lse, slots = dsa.attention_decode(*args, topk=topk)
    out, lse = to_numpy(out, "bfloat16").astype(np.float64), to_numpy(lse, "float32")
    slots = to_numpy(slots, "int32")
    logits = to_numpy(dsa.indexer_decode_logits(*on_target(index_q, index_cache, weights, block_table, context_lens)),
                      "float32")
    ke = np.array([context_lens[r // next_n] - next_n + r % next_n + 1 for r in range(B * next_n)], np.int32)
    for r, columns in enumerate(topk_reference(logits, topk, np.zeros(B * next_n, np.int32), ke)):
        expected = {int(block_table[r // next_n, c // 64]) * 64 + c % 64 for c in columns}
        assert set(slots[r][slots[r] >= 0].tolist()) == expected
        assert np.sum(slots[r] >= 0) == min(topk, ke[r])
    ref_out, ref_lse = sparse_mla_reference(q.reshape(B * next_n, heads, 576),
                                            keys[:, None, :].astype(ml_dtypes.bfloat16), slots[:, None, :],
                                            576 ** -0.5, 512)
    assert np.max(np.abs(lse - ref_lse.reshape(B, next_n, heads).transpose(0, 2, 1))) < 1e-4
    ref_out = ref_out.reshape(out.shape)
    assert 1 - 2 * np.sum(out * ref_out) / np.sum(out ** 2 + ref_out ** 2) <= 1e-5



def test_one_build_serves_every_length(rng):
    """Every DSA kernel reads its lengths at the call: once a prefill and a decode have run, a
    prefill of other lengths (one sequence or several) and a decode of another batch, cache and
    block table compile nothing."""
    H, D, heads, d_qk, topk = 16, 32, 16, 96, 8

    def prefill(S, S_kv, cu=None):
        sequences = {} if cu is None else dict(cu_seqlens_q=on_target(np.array(cu[0], np.int32))[0],
                                               cu_seqlens_kv=on_target(np.array(cu[1], np.int32))[0])
        dsa.attention_prefill(*on_target(fp8_values((S, H, D), rng), rand((S, H), "float32", rng),
                                         fp8_values((S_kv, D), rng), np.ones(S_kv, np.float32),
                                         rand((S, heads, d_qk), "bfloat16", rng), rand((S_kv, 1, d_qk), "bfloat16", rng)),
                              **sequences, topk=topk, d_v=64)
        dsa.act_quant(*on_target(rand((S, 256), "bfloat16", rng)))

    def decode(B, pages, max_pages):
        index_cache, _, _ = indexer_cache(pages, D, rng)
        kv_cache, _ = fp8_cache(pages, 64, rng)
        block_table = rng.integers(0, pages, size=(B, max_pages)).astype(np.int32)
        context_lens = rng.integers(1, max_pages * 64, size=B).astype(np.int32)
        dsa.attention_decode(*on_target(fp8_values((B, 2, H, D), rng), rand((B * 2, H), "float32", rng), index_cache,
                                        rand((B, 2, heads, 576), "bfloat16", rng, -1, 1), kv_cache, block_table,
                                        context_lens), topk=topk)

    prefill(9, 20)
    prefill(9, 20, ([0, 4, 9], [0, 10, 20]))
    decode(2, 8, 3)
    with compiled_kernels() as compiled:
        prefill(13, 41)
        prefill(3, 3)
        prefill(14, 30, ([0, 1, 5, 14], [0, 2, 10, 30]))
        decode(3, 10, 4)
        decode(1, 8, 2)
    assert compiled == []


def test_the_steps_small_kernels_build_for_sm90a():
    from tilec.ops.dsa.step import decode_ranges_kernel, single_sequence_kernel
    from tilec.ops.dsa.topk import physical_slots_kernel

    assert "__global__" in build_for_cuda(single_sequence_kernel, "sm_90a")

    assert "__global__" in build_for_cuda(decode_ranges_kernel, "sm_90a", next_n=2)
    assert "__global__" in build_for_cuda(physical_slots_kernel, "sm_90a", k=2048, next_n=2,
                                          page_size=64)

"""FlashAttention's forward pass as a library kernel: O = softmax(Q K^T * scale) V.

One block of query rows a program; the K and V tiles stream through shared memory in a
pipelined loop while an online softmax keeps each row's running max and sum in registers, and
the probabilities, converted to 16 bits, are the register operand of O += P V. On Hopper the
loop is warp-specialized (a TMA producer warpgroup and two consumer warpgroups, wgmma); on
other GPUs it runs on mma.sync with cp.async, and on the CPU backend elsewhere.

Conventions are FlashAttention's: causal attention is aligned bottom-right when the query and
key lengths differ (query row i sees keys up to i + seq_kv - seq_q), a row that sees no key
gives 0 and a log-sum-exp of -inf, and grouped-query attention shares each K/V head among
heads // heads_kv query heads.
"""

import math

import tilec
import tilec.language as T
from tilec import capture

LOG2E = 1.4426950408889634  # softmax by exp2: e^x = 2^(x log2(e))
HEAD_DIMS = (64, 128, 256)

# Tile configurations by target and head dim: block_M query rows, block_N keys a step.
HOPPER_CONFIGS = {64: dict(block_M=128, block_N=128, num_stages=2, threads=256),
                  128: dict(block_M=128, block_N=128, num_stages=2, threads=256),
                  256: dict(block_M=128, block_N=64, num_stages=2, threads=256)}
GPU_CONFIGS = {64: dict(block_M=64, block_N=64, num_stages=2, threads=128),
               128: dict(block_M=64, block_N=64, num_stages=2, threads=128),
               256: dict(block_M=64, block_N=32, num_stages=2, threads=128)}
CPU_CONFIG = dict(block_M=64, block_N=64, num_stages=1, threads=128)


@tilec.jit(out_idx=[3, 4])
def attention_forward(batch, heads, heads_kv, seq_q, seq_kv, dim, causal, sm_scale, layout="bshd",
                      dtype="float16", block_M=128, block_N=128, num_stages=2, threads=256):
    group = heads // heads_kv
    past = seq_kv - seq_q  # causal, bottom-right: query row i sees keys 0 .. i + past
    scale = sm_scale * LOG2E
    bshd = layout == "bshd"
    q_shape = [batch, seq_q, heads, dim] if bshd else [batch, heads, seq_q, dim]
    kv_shape = [batch, seq_kv, heads_kv, dim] if bshd else [batch, heads_kv, seq_kv, dim]

    @T.prim_func
    def main(Q: T.Tensor(q_shape, dtype), K: T.Tensor(kv_shape, dtype), V: T.Tensor(kv_shape, dtype),
             O: T.Tensor(q_shape, dtype), LSE: T.Tensor([batch, heads, seq_q], "float32")):
        with T.Kernel(T.ceildiv(seq_q, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_M, dim], dtype)
            K_shared = T.alloc_shared([block_N, dim], dtype)
            V_shared = T.alloc_shared([block_N, dim], dtype)
            scores = T.alloc_fragment([block_M, block_N], "float32")
            probs = T.alloc_fragment([block_M, block_N], dtype)
            acc_o = T.alloc_fragment([block_M, dim], "float32")
            row_max = T.alloc_fragment([block_M], "float32")
            row_max_prev = T.alloc_fragment([block_M], "float32")
            row_max_finite = T.alloc_fragment([block_M], "float32")
            rescale = T.alloc_fragment([block_M], "float32")
            row_sum = T.alloc_fragment([block_M], "float32")
            denominator = T.alloc_fragment([block_M], "float32")
            lse = T.alloc_fragment([block_M], "float32")
            head_kv = by // group
            rows = bx * block_M

            if bshd:
                T.copy(Q[bz, rows:rows + block_M, by, :], Q_shared)
            else:
                T.copy(Q[bz, by, rows:rows + block_M, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(denominator, 0)
            T.fill(row_max, -T.infinity("float32"))
            if causal:  # whole key blocks past the last row's diagonal are skipped
                blocks = T.max(0, T.min(T.ceildiv(seq_kv, block_N), T.ceildiv(rows + block_M + past, block_N)))
            else:
                blocks = T.ceildiv(seq_kv, block_N)
            for k in T.Pipelined(blocks, num_stages=num_stages):
                keys = k * block_N
                if bshd:
                    T.copy(K[bz, keys:keys + block_N, head_kv, :], K_shared)
                else:
                    T.copy(K[bz, head_kv, keys:keys + block_N, :], K_shared)
                # Keys past the sequence and, causal, past a row's diagonal count for nothing.
                for i, j in T.Parallel(block_M, block_N):
                    if causal:
                        scores[i, j] = T.if_then_else(rows + i + past >= keys + j, 0, -T.infinity("float32"))
                    else:
                        scores[i, j] = T.if_then_else(keys + j < seq_kv, 0, -T.infinity("float32"))
                T.gemm(Q_shared, K_shared, scores, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(row_max, row_max_prev)
                T.reduce_max(scores, row_max, dim=1, clear=False)
                # A row that has seen no key yet keeps a max of -inf: its terms use 0 instead,
                # so that exp2(-inf - -inf) never makes a NaN.
                for i in T.Parallel(block_M):
                    row_max_finite[i] = T.if_then_else(row_max[i] == -T.infinity("float32"), 0, row_max[i])
                    rescale[i] = T.exp2((row_max_prev[i] - row_max_finite[i]) * scale)
                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] *= rescale[i]
                for i, j in T.Parallel(block_M, block_N):
                    scores[i, j] = T.exp2(scores[i, j] * scale - row_max_finite[i] * scale)
                T.reduce_sum(scores, row_sum, dim=1)
                for i in T.Parallel(block_M):
                    denominator[i] = denominator[i] * rescale[i] + row_sum[i]
                T.copy(scores, probs)
                if bshd:
                    T.copy(V[bz, keys:keys + block_N, head_kv, :], V_shared)
                else:
                    T.copy(V[bz, head_kv, keys:keys + block_N, :], V_shared)
                T.gemm(probs, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] = T.if_then_else(denominator[i] > 0, acc_o[i, j] / denominator[i], 0)
            for i in T.Parallel(block_M):
                lse[i] = T.if_then_else(denominator[i] > 0, (row_max[i] * scale + T.log2(denominator[i])) / LOG2E,
                                        -T.infinity("float32"))
            if bshd:
                T.copy(acc_o, O[bz, rows:rows + block_M, by, :])
            else:
                T.copy(acc_o, O[bz, by, rows:rows + block_M, :])
            T.copy(lse, LSE[bz, by, rows:rows + block_M])

    return main


def _config(tensor, dim):
    if not getattr(tensor, "is_cuda", False):  # NumPy arrays (CPU backend) and CPU tensors
        return CPU_CONFIG
    import torch  # noqa: PLC0415 (a CUDA tensor is a torch tensor)

    hopper = torch.cuda.get_device_capability(tensor.device) == (9, 0)
    return (HOPPER_CONFIGS if hopper else GPU_CONFIGS)[dim]


def flash_attention(q, k, v, causal=False, sm_scale=None, layout="bshd", return_lse=False):
    """softmax(Q K^T * sm_scale) V for 16-bit q, k, v (float16 or bfloat16, one type).

    layout "bshd": q [batch, seq_q, heads, dim], k and v [batch, seq_kv, heads_kv, dim];
    "bhsd": q [batch, heads, seq_q, dim], k and v [batch, heads_kv, seq_kv, dim]. dim is 64,
    128 or 256; heads_kv divides heads (grouped-query and multi-query attention). sm_scale
    defaults to 1 / sqrt(dim). causal aligns the mask bottom-right (FlashAttention's
    convention when seq_q != seq_kv). Returns O in q's layout and type, allocated like q, and
    with return_lse also the log-sum-exp of each row's scaled scores, [batch, heads, seq_q]
    float32 (-inf for a row that sees no key, whose output is 0)."""
    if layout not in ("bshd", "bhsd"):
        raise ValueError(f"layout must be 'bshd' or 'bhsd', not {layout!r}")
    shapes = {}
    for name, t in (("q", q), ("k", k), ("v", v)):
        shape = tuple(t.shape)
        if len(shape) != 4:
            raise ValueError(f"{name} must have 4 dims ({layout}), not {len(shape)}: {shape}")
        shapes[name] = shape
    if shapes["k"] != shapes["v"]:
        raise ValueError(f"k and v must have one shape, not {shapes['k']} and {shapes['v']}")
    dtype = capture.tensor_dtype_name(q)
    if dtype not in ("float16", "bfloat16"):
        raise ValueError(f"q must be float16 or bfloat16, not {dtype}")
    for name, t in (("k", k), ("v", v)):
        if capture.tensor_dtype_name(t) != dtype:
            raise ValueError(f"{name} must be {dtype} like q, not {capture.tensor_dtype_name(t)}")
    if layout == "bshd":
        (batch, seq_q, heads, dim), (batch_kv, seq_kv, heads_kv, dim_kv) = shapes["q"], shapes["k"]
    else:
        (batch, heads, seq_q, dim), (batch_kv, heads_kv, seq_kv, dim_kv) = shapes["q"], shapes["k"]
    if batch_kv != batch:
        raise ValueError(f"k has batch {batch_kv} but q has {batch}")
    if dim_kv != dim:
        raise ValueError(f"k has head dim {dim_kv} but q has {dim}")
    if dim not in HEAD_DIMS:
        raise ValueError(f"head dim must be one of {HEAD_DIMS}, not {dim}")
    if heads_kv < 1 or heads % heads_kv:
        raise ValueError(f"k's {heads_kv} heads must divide q's {heads} (grouped-query attention)")
    if min(batch, seq_q, seq_kv) < 1:
        raise ValueError(f"batch ({batch}), seq_q ({seq_q}) and seq_kv ({seq_kv}) must be at least 1")
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(dim)
    elif not isinstance(sm_scale, (int, float)) or not math.isfinite(sm_scale) or sm_scale <= 0:
        raise ValueError(f"sm_scale must be a positive finite number, not {sm_scale!r}")
    kernel = attention_forward(batch, heads, heads_kv, seq_q, seq_kv, dim, bool(causal), float(sm_scale),
                               layout=layout, dtype=dtype, **_config(q, dim))
    out, lse = kernel(q, k, v)
    return (out, lse) if return_lse else out

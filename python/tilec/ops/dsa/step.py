"""The whole DSA attention step: the lightning indexer scores each query token's visible keys,
top-k picks the keys to attend to, and sparse MLA attends to them.

Prefill: one or more sequences packed along the token dim (cu_seqlens, as FlashAttention's
varlen), each causal with its queries the last of its keys (bottom-right). The logits are made
for `chunk` query tokens at a time, so that a step holds chunk * S_kv of them at once, not
S * S_kv. Decode: next_n queries a sequence over its paged caches (the indexer's keys and the
attention's FP8 latent KV, pages of 64 tokens under one block table).
"""

import tilec
import tilec.language as T
from tilec import capture
from tilec.kernel import _allocate as allocate

from ..device import for_device_of
from .indexer import PAGE_SIZE, indexer_decode_logits, indexer_logits
from .sparse_mla import sparse_mla_decode, sparse_mla_prefill
from .topk import topk_indices


@tilec.jit
def causal_ranges_kernel(threads=128):
    # Each query token's visible keys [ks, ke) in the packed keys: sequence b's query i (of n_q)
    # sees its keys 0 .. i + n_kv - n_q. `offsets` is the sequences' count plus one.
    tokens, offsets = T.symbolic("tokens"), T.symbolic("offsets")

    @T.prim_func
    def main(CU_Q: T.Tensor((offsets,), "int32"), CU_KV: T.Tensor((offsets,), "int32"),
             KS: T.Tensor((tokens,), "int32"), KE: T.Tensor((tokens,), "int32")):
        with T.Kernel(T.ceildiv(tokens, threads), threads=threads) as bx:
            tx = T.get_thread_binding()
            t = bx * threads + tx
            if t < tokens:
                b = T.alloc_var("int32", 0)
                for s in T.serial(offsets - 1):
                    if CU_Q[s + 1] <= t:
                        b = s + 1
                b = T.min(b, offsets - 2)
                n_q = CU_Q[b + 1] - CU_Q[b]
                n_kv = CU_KV[b + 1] - CU_KV[b]
                KS[t] = CU_KV[b]
                KE[t] = CU_KV[b] + T.max(T.min(t - CU_Q[b] + 1 + n_kv - n_q, n_kv), 0)

    return main


def attention_prefill(index_q, index_weights, index_k, index_k_scale, q, kv, cu_seqlens_q=None, cu_seqlens_kv=None,
                      topk=2048, sm_scale=None, d_v=512, chunk=4096):
    """(out, lse, indices) of DeepSeek Sparse Attention's prefill step over packed sequences.

    The indexer's inputs: index_q [S, H, D] and index_k [S_kv, D] float8_e4m3, index_k_scale
    [S_kv] and index_weights [S, H] float32 (indexer_logits). The attention's: q [S, h_q, d_qk]
    and kv [S_kv, 1, d_qk] bfloat16 (sparse_mla_prefill). cu_seqlens_q and cu_seqlens_kv
    (int32 [B + 1], starting at 0, ending at S and S_kv) mark the sequences; left out, one
    sequence. Each query token sees its sequence's keys up to its own position, aligned
    bottom-right; of those it attends to the topk its indexer logits rank highest
    (topk_indices). Returns out [S, h_q, d_v] bfloat16, lse [S, h_q] float32, and the indices
    [S, topk] int32 it chose (-1 where a token sees fewer than topk keys).

    The queries go `chunk` at a time; each chunk's logits [chunk, S_kv] float32 are the step's
    only memory besides its outputs, which each chunk writes in place."""
    S, S_kv = tuple(index_q.shape)[0], tuple(index_k.shape)[0]
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
        raise ValueError(f"chunk must be a positive int, not {chunk!r}")
    if isinstance(topk, bool) or not isinstance(topk, int) or topk < 1:
        raise ValueError(f"topk must be a positive int, not {topk!r}")
    if tuple(q.shape)[0] != S or tuple(kv.shape)[0] != S_kv:
        raise ValueError(f"q and kv must have index_q's {S} and index_k's {S_kv} tokens, not "
                         f"{tuple(q.shape)[0]} and {tuple(kv.shape)[0]}")
    cu_q, cu_kv = _sequences(index_q, cu_seqlens_q, cu_seqlens_kv, S, S_kv)
    ks, ke = allocate((S,), "int32", q, None), allocate((S,), "int32", q, None)
    for_device_of(q, causal_ranges_kernel)()(cu_q, cu_kv, ks, ke)
    heads = tuple(q.shape)[1]
    out, lse, indices = (allocate(shape, dtype, q, None) for shape, dtype in (((S, heads, d_v), "bfloat16"),
                                                                      ((S, heads), "float32"), ((S, topk), "int32")))
    for start in range(0, S, chunk):
        rows = slice(start, min(start + chunk, S))
        logits = indexer_logits(index_q[rows], index_k, index_k_scale, index_weights[rows], ks[rows], ke[rows])
        topk_indices(logits, topk, ks[rows], ke[rows], out=indices[rows])
        del logits  # the next chunk's logits take its place
        sparse_mla_prefill(q[rows], kv, indices[rows].reshape(-1, 1, topk), sm_scale, d_v,
                           out=(out[rows], lse[rows]))
    return out, lse, indices


@tilec.jit
def single_sequence_kernel():
    # cu_seqlens of one sequence, written on the device: a copy from the host could not be
    # captured in a CUDA graph.
    @T.prim_func
    def main(tokens: T.int32, keys: T.int32, CU_Q: T.Tensor((2,), "int32"), CU_KV: T.Tensor((2,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(2):
                CU_Q[i] = i * tokens
                CU_KV[i] = i * keys

    return main


@tilec.jit(out_idx=[-1])
def decode_ranges_kernel(next_n, threads=128):
    # The end of each decoding query's visible tokens: query j of sequence b sees tokens
    # s <= context_lens[b] - next_n + j (of the logits' width).
    batch = T.symbolic("batch")

    @T.prim_func
    def main(ContextLens: T.Tensor((batch,), "int32"), width: T.int32, KE: T.Tensor((batch * next_n,), "int32")):
        with T.Kernel(T.ceildiv(batch * next_n, threads), threads=threads) as bx:
            for i in T.Parallel(threads):
                row = bx * threads + i
                if row < batch * next_n:
                    KE[row] = T.max(T.min(ContextLens[row // next_n] - next_n + row % next_n + 1, width), 0)

    return main


def attention_decode(index_q, index_weights, index_cache, q, kv_cache, block_table, context_lens, topk=2048,
                     sm_scale=None):
    """(out, lse, slots) of DeepSeek Sparse Attention's decoding step: next_n queries a sequence.

    The indexer's inputs: index_q [B, next_n, H, D] float8_e4m3, index_weights [B * next_n, H]
    float32, index_cache its paged keys (indexer_decode_logits). The attention's: q
    [B, next_n, h_q, 576] bfloat16 and kv_cache the FP8 latent cache (sparse_mla_decode). Both
    caches are in pages of 64 tokens under one block_table [B, max_pages] int32; context_lens
    [B] int32. Query j of sequence b sees tokens s <= context_lens[b] - next_n + j and attends to
    the topk its indexer logits rank highest. Returns out [B, next_n, h_q, 512] bfloat16, lse
    [B, h_q, next_n] float32 and the chosen cache slots [B * next_n, topk] int32 (-1 past a
    query's visible tokens)."""
    if isinstance(topk, bool) or not isinstance(topk, int) or topk < 1:
        raise ValueError(f"topk must be a positive int, not {topk!r}")
    B, next_n = tuple(index_q.shape)[:2]
    if tuple(q.shape)[:2] != (B, next_n):
        raise ValueError(f"q must have index_q's [B, next_n] = [{B}, {next_n}] leading dims, not "
                         f"{list(tuple(q.shape)[:2])}")
    logits = indexer_decode_logits(index_q, index_cache, index_weights, block_table, context_lens)
    ke = for_device_of(logits, decode_ranges_kernel)(next_n)(context_lens, tuple(logits.shape)[1])
    slots = topk_indices(logits, topk, ke=ke, block_table=block_table, next_n=next_n, page_size=PAGE_SIZE)
    del logits
    out, lse = sparse_mla_decode(q, kv_cache, slots.reshape(B, next_n, topk), sm_scale)
    return out, lse, slots


def _sequences(like, cu_seqlens_q, cu_seqlens_kv, S, S_kv):
    if (cu_seqlens_q is None) != (cu_seqlens_kv is None):
        raise ValueError("cu_seqlens_q and cu_seqlens_kv go together: give both or neither")
    if cu_seqlens_q is None:
        # on the device of `like`, which need not be the current one
        cu_q, cu_kv = allocate((2,), "int32", like, None), allocate((2,), "int32", like, None)
        for_device_of(like, single_sequence_kernel)()(S, S_kv, cu_q, cu_kv)
        return cu_q, cu_kv
    for name, cu in (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_kv", cu_seqlens_kv)):
        if capture.tensor_dtype_name(cu) != "int32" or len(tuple(cu.shape)) != 1 or tuple(cu.shape)[0] < 2:
            raise ValueError(f"{name} must be int32 [B + 1] with B >= 1, not {capture.tensor_dtype_name(cu)} "
                             f"of shape {tuple(cu.shape)}")
    if tuple(cu_seqlens_q.shape) != tuple(cu_seqlens_kv.shape):
        raise ValueError(f"cu_seqlens_q and cu_seqlens_kv must have one shape (B + 1), not "
                         f"{tuple(cu_seqlens_q.shape)} and {tuple(cu_seqlens_kv.shape)}")
    return cu_seqlens_q, cu_seqlens_kv

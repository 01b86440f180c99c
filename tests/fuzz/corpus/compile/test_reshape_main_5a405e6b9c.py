#!target hip gfx906
#!func main
#!bind T = module(tilec.language)
#!bind dim = 64
#!bind dtype = "float16"
#!bind heads = 64
#!bind keys = 64
#!bind queries = 2
@T.prim_func
def main(Q: T.Tensor((queries * heads, dim), dtype), K: T.Tensor((keys, dim), dtype),
         W: T.Tensor((queries, heads), "float32"), Out: T.Tensor((keys, queries), "float32")):
    with T.Kernel(1, threads=128) as _:
        Q_shared = T.alloc_shared((queries * heads, dim), dtype)
        K_shared = T.alloc_shared((keys, dim), dtype)
        scores = T.alloc_fragment((keys, queries * heads), "float32")
        by_head = T.reshape(scores, (keys, queries, heads))
        weights = T.alloc_fragment((queries, heads), "float32")
        logits = T.alloc_fragment((keys, queries), "float32")
        T.copy(Q, Q_shared)
        T.copy(K, K_shared)
        T.copy(W, weights)
        T.gemm(K_shared, Q_shared, scores, transpose_B=True, clear_accum=True)
        for k, q, h in T.Parallel(keys, queries, heads):
            by_head[k, q, h] = T.max(by_head[k, q, h], 0) * weights[q, h]
        T.reduce_sum(by_head, logits, dim=-1, clear=True)
        T.copy(logits, Out)

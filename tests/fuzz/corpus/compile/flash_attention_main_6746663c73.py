#!target cuda sm_80
#!func main
#!bind T = module(tilec.language)
#!bind batch = 1
#!bind block_M = 64
#!bind block_N = 64
#!bind causal = True
#!bind dim = 64
#!bind dtype = "float16"
#!bind heads = 2
#!bind scale = 0.18033688
#!bind seq_len = 200
#!bind shape = [1, 200, 2, 64]
@T.prim_func
def main(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype),
         Output: T.Tensor(shape, dtype)):
    with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=128) as (bx, by, bz):
        Q_shared = T.alloc_shared([block_M, dim], dtype)
        K_shared = T.alloc_shared([block_N, dim], dtype)
        V_shared = T.alloc_shared([block_N, dim], dtype)
        scores = T.alloc_fragment([block_M, block_N], "float32")
        probs = T.alloc_fragment([block_M, block_N], dtype)
        acc_o = T.alloc_fragment([block_M, dim], "float32")
        row_max = T.alloc_fragment([block_M], "float32")
        row_max_prev = T.alloc_fragment([block_M], "float32")
        row_scale = T.alloc_fragment([block_M], "float32")
        row_sum = T.alloc_fragment([block_M], "float32")
        denominator = T.alloc_fragment([block_M], "float32")

        T.copy(Q[bz, bx * block_M:(bx + 1) * block_M, by, :], Q_shared)
        T.fill(acc_o, 0)
        T.fill(denominator, 0)
        T.fill(row_max, -T.infinity("float32"))
        blocks = T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N)) if causal \
            else T.ceildiv(seq_len, block_N)
        for k in T.Pipelined(blocks, num_stages=2):
            T.copy(K[bz, k * block_N:(k + 1) * block_N, by, :], K_shared)
            T.copy(V[bz, k * block_N:(k + 1) * block_N, by, :], V_shared)
            # Keys past the sequence (and, causal, past the query) count for nothing.
            for i, j in T.Parallel(block_M, block_N):
                if causal:
                    scores[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0,
                                                  -T.infinity("float32"))
                else:
                    scores[i, j] = T.if_then_else(k * block_N + j >= seq_len, -T.infinity("float32"), 0)
            T.gemm(Q_shared, K_shared, scores, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
            T.copy(row_max, row_max_prev)
            T.reduce_max(scores, row_max, dim=1, clear=False)
            for i in T.Parallel(block_M):
                row_scale[i] = T.exp2(row_max_prev[i] * scale - row_max[i] * scale)
            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] *= row_scale[i]
            for i, j in T.Parallel(block_M, block_N):
                scores[i, j] = T.exp2(scores[i, j] * scale - row_max[i] * scale)
            T.reduce_sum(scores, row_sum, dim=1)
            for i in T.Parallel(block_M):
                denominator[i] = denominator[i] * row_scale[i] + row_sum[i]
            for i, j in T.Parallel(block_M, block_N):
                probs[i, j] = scores[i, j]
            T.gemm(probs, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
        for i, j in T.Parallel(block_M, dim):
            acc_o[i, j] /= denominator[i]
        T.copy(acc_o, Output[bz, bx * block_M:(bx + 1) * block_M, by, :])

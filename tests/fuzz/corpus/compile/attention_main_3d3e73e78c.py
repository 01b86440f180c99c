#!func main
#!bind LOG2E = 1.4426950408889634
#!bind T = module(tilec.language)
#!bind batch = 2
#!bind block_M = 64
#!bind bshd = True
#!bind dim = 64
#!bind dtype = "float16"
#!bind heads = 8
#!bind num_splits = 3
#!bind q_shape = [2, 3, 8, 64]
#!bind seq_q = 3
#!bind threads = 128
@T.prim_func
def main(O_split: T.Tensor([num_splits] + q_shape, "float32"),
         LSE_split: T.Tensor([num_splits, batch, heads, seq_q], "float32"), O: T.Tensor(q_shape, dtype),
         LSE: T.Tensor([batch, heads, seq_q], "float32")):
    with T.Kernel(T.ceildiv(seq_q, block_M), heads, batch, threads=threads) as (bx, by, bz):
        # The rows' weights go through shared memory, so that the merge of O is spread over
        # the threads by columns too, not a row a thread.
        weights = T.alloc_shared([num_splits, block_M], "float32")
        lse_max = T.alloc_fragment([block_M], "float32")
        total = T.alloc_fragment([block_M], "float32")
        lse = T.alloc_fragment([block_M], "float32")
        acc_o = T.alloc_fragment([block_M, dim], "float32")
        rows = bx * block_M
        T.fill(lse_max, -T.infinity("float32"))
        T.fill(total, 0)
        T.fill(acc_o, 0)
        for i in T.Parallel(block_M):
            for s in T.serial(num_splits):
                lse_max[i] = T.max(lse_max[i], LSE_split[s, bz, by, rows + i])
            # A row no split saw a key of keeps -inf: its weights use 0, never -inf - -inf.
            lse_max[i] = T.if_then_else(lse_max[i] == -T.infinity("float32"), 0, lse_max[i])
            for s in T.serial(num_splits):
                weights[s, i] = T.exp2((LSE_split[s, bz, by, rows + i] - lse_max[i]) * LOG2E)
                total[i] += weights[s, i]
            for s in T.serial(num_splits):
                weights[s, i] = T.if_then_else(total[i] > 0, weights[s, i] / total[i], 0)
            lse[i] = T.if_then_else(total[i] > 0, lse_max[i] + T.log(total[i]), -T.infinity("float32"))
        for i, j in T.Parallel(block_M, dim):
            for s in T.serial(num_splits):
                if bshd:
                    acc_o[i, j] += weights[s, i] * O_split[s, bz, rows + i, by, j]
                else:
                    acc_o[i, j] += weights[s, i] * O_split[s, bz, by, rows + i, j]
        if bshd:
            T.copy(acc_o, O[bz, rows:rows + block_M, by, :])
        else:
            T.copy(acc_o, O[bz, by, rows:rows + block_M, :])
        T.copy(lse, LSE[bz, by, rows:rows + block_M])

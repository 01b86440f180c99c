#!func main
#!bind T = module(tilec.language)
#!bind block_k = 8
#!bind block_n = 16
#!bind k = 256
#!bind n = 64
@T.prim_func
def main(A: T.Tensor((k,), "float32"), B: T.Tensor((n, k), "float32"), C: T.Tensor((n,), "float32")):
    with T.Kernel(T.ceildiv(n, block_n), threads=(block_n, block_k)) as bn:
        tn = T.get_thread_binding(0)
        tk = T.get_thread_binding(1)
        acc = T.alloc_local((1,), "float32")
        row_sums = T.alloc_shared((block_n,), "float32")
        if tk == 0:
            row_sums[tn] = 0
        T.clear(acc)
        for bk in T.serial(T.ceildiv(k, block_k)):
            acc[0] += A[bk * block_k + tk] * B[bn * block_n + tn, bk * block_k + tk]
        T.atomic_add(row_sums[tn], acc[0])
        C[bn * block_n + tn] = row_sums[tn]

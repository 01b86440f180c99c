#!target hip gfx906
#!func main
#!bind T = module(tilec.language)
#!bind block = 16
#!bind n = 64
#!bind num_stages = 1
@T.prim_func
def main(A: T.Tensor((n,), "float32"), S1: T.Tensor((block,), "float32"),
         S2: T.Tensor((block,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        chunk = T.alloc_shared((block,), "float32")
        acc1 = T.alloc_fragment((block,), "float32")
        acc2 = T.alloc_fragment((block,), "float32")
        T.clear(acc1)
        T.clear(acc2)
        for k in T.Pipelined(T.ceildiv(n, block), num_stages=num_stages):
            T.copy(A[k * block], chunk)
            for i in T.Parallel(block):
                acc1[i] += chunk[i]
        for k in T.Pipelined(T.ceildiv(n, block)):
            T.copy(A[k * block], chunk)
            for i in T.Parallel(block):
                acc2[i] += chunk[i] * k
        T.copy(acc1, S1)
        T.copy(acc2, S2)

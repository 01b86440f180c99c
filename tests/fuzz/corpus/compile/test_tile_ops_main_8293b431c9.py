#!target hip gfx940
#!func main
#!bind M = 16
#!bind N = 256
#!bind T = module(tilec.language)
#!bind block_m = 1
@T.prim_func
def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
    with T.Kernel(T.ceildiv(M, block_m), threads=128) as bx:
        A_local = T.alloc_fragment((block_m, N), "float32")
        T.copy(A[bx * block_m:(bx + 1) * block_m, :], A_local)
        for i, j in T.Parallel(block_m, N):
            A_local[i, j] = A_local[i, j] * 3
        T.copy(A_local, B[bx * block_m:(bx + 1) * block_m, :])

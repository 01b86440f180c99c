#!target hip gfx940
#!func main
#!bind M = 32
#!bind N = 32
#!bind T = module(tilec.language)
#!bind block_M = 32
#!bind block_N = 32
@T.prim_func
def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_s = T.alloc_shared((block_M, block_N), "float32")
        A_f = T.alloc_fragment((block_M, block_N), "float32")
        B_s = T.alloc_shared((block_M, block_N), "float32")
        T.copy(A[by * block_M:(by + 1) * block_M, bx * block_N:(bx + 1) * block_N], A_s)
        T.copy(A_s, A_f)
        T.copy(A_f, B_s)
        T.copy(B_s, B[by * block_M:(by + 1) * block_M, bx * block_N:(bx + 1) * block_N])

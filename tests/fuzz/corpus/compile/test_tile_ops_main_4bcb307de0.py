#!target hip gfx906
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
        T.copy(A[by * block_M, bx * block_N], A_s)
        T.copy(A_s, B[by * block_M, bx * block_N])

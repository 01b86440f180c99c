#!target hip gfx906
#!func main
#!bind M = 48
#!bind N = 61
#!bind T = module(tilec.language)
#!bind block = 32
#!bind dtype = "float16"
@T.prim_func
def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
    with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
        A_s = T.alloc_shared((block, block), dtype)
        A_f = T.alloc_fragment((block, block), dtype)
        T.copy(A[by * block, bx * block], A_s)
        T.copy(A_s, A_f)
        T.copy(A_f, B[by * block, bx * block])

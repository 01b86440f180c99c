#!target cuda sm_80
#!func main
#!bind M = 10
#!bind N = 24
#!bind T = module(tilec.language)
#!bind block = 4
@T.prim_func
def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
    with T.Kernel(T.ceildiv(M, block), threads=64) as bx:
        S = T.alloc_shared((block, N), "float32")
        T.copy(A[bx * block, 0], S)
        for r in T.serial(block):
            if r % 2 == 1:
                T.cumsum(S[r, 0:N], dim=1, reverse=True)
            else:
                T.cumsum(S[r, 0:N], dim=1)
        T.copy(S, B[bx * block, 0])

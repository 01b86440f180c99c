#!target hip gfx940
#!func main
#!bind M = 40
#!bind N = 21
#!bind T = module(tilec.language)
#!bind block = (16, 8)
@T.prim_func
def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"),
         C: T.Tensor((M, N), "float32")):
    with T.Kernel(T.ceildiv(N, block[1]), T.ceildiv(M, block[0]), threads=128) as (bx, by):
        bm, bn = block
        for i, j in T.Parallel(bm, bn):
            r, c = by * bm + i, bx * bn + j
            if r < M and c < N:
                a, b = A[r, c], B[r, c]
                C[r, c] = a * 10 + b

#!target cuda sm_90a
#!func main
#!config tilec.wgmma=false
#!bind T = module(tilec.language)
#!bind cols = 248
#!bind padded = 256
#!bind rows = 64
@T.prim_func
def main(A: T.Tensor((rows, cols), "float16"), B: T.Tensor((rows, padded), "float16")):
    with T.Kernel(1, threads=128) as bx:
        for i, j in T.Parallel(rows, padded):
            B[i, j] = T.if_then_else(j < cols, A[i, j], T.float16(0))

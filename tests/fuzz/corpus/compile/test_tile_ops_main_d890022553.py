#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32")):
    with T.Kernel(4, threads=128) as bx:
        S = T.alloc_shared((16, 64), "float32")
        F = T.alloc_fragment((16, 64), "float32")
        if bx % 2 == 0:
            for i, j in T.Parallel(16, 64):
                S[i, j] = T.float32(float("nan"))
                F[i, j] = T.float32(float("nan"))
            for i, j in T.Parallel(16, 64):
                B[bx * 16 + i, j] = A[bx * 16 + i, j] + T.if_then_else(S[i, j] == F[i, j], 1.0, 0.0)
        else:
            for i, j in T.Parallel(16, 64):
                B[bx * 16 + i, j] = A[bx * 16 + i, j] + S[i, j] + F[i, j]

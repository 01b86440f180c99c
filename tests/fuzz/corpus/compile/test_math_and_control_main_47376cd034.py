#!target hip gfx940
#!func main
#!bind T = module(tilec.language)
#!bind n = 100
@T.prim_func
def main(A: T.Tensor((n,), "int32"), B: T.Tensor((n,), "int32"), X: T.Tensor((n,), "float32"),
         Q: T.Tensor((n,), "int32"), R: T.Tensor((n,), "int32"), C: T.Tensor((n,), "float32"),
         F: T.Tensor((n,), "float16"), S: T.Tensor((n,), "int32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(n):
            Q[i] = T.floordiv(A[i], B[i])
            R[i] = T.floormod(A[i], B[i])
            C[i] = T.clamp(X[i], -0.5, 0.25)
            F[i] = T.Cast("float16", X[i])
        for i in T.Serial(n):
            S[i] = A[i] + i

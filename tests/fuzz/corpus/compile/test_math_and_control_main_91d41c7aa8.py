#!target hip gfx90a
#!func main
#!bind T = module(tilec.language)
#!bind n = 64
@T.prim_func
def main(A: T.Tensor((n,), "float32"), I: T.Tensor((n,), "int32"),
         P: T.Tensor((n,), "int32"), Q: T.Tensor((n,), "int32"),
         C: T.Tensor((n,), "int32"), D: T.Tensor((n,), "float32"),
         E: T.Tensor((n,), "float64"), G: T.Tensor((n + 1,), "int32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.serial(n):
            C[i] = T.cast(A[i], "int32")
            D[i] = T.cast(I[i], "float32") / 4
            E[i] = T.cast(A[i], "float64") * T.cast(A[i], "float64")
            G[i] = T.ceildiv(P[i], Q[i])
        G[n] = T.ceildiv(100, 32)

#!target hip gfx906
#!func main
#!bind T = module(tilec.language)
#!bind n = 4
@T.prim_func
def main(A: T.Tensor((n,), "float32"), out: T.Tensor((7,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        acc = T.alloc_local((7,), "float32")
        for i in T.serial(7):
            acc[i] = 0.0
        for i in T.serial(n):
            acc[0] += A[i]
        for i in T.serial(2, n):
            acc[1] += A[i]
        for i in T.serial(1, n, 3):
            acc[2] += A[i]
        for i in T.unroll(4):
            acc[3] += A[i] * (i + 1)
        for i in range(n):
            acc[4] += A[i] * i
        for i in range(3, n, 2):
            acc[5] += A[i]
        for i in T.serial(n):
            for j in T.serial(i):
                acc[6] += A[j]
        for i in T.serial(7):
            out[i] = acc[i]

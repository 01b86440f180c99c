#!target hip gfx90a
#!func main
#!bind T = module(tilec.language)
#!bind n = 9
#!bind width = 7
@T.prim_func
def main(A: T.Tensor((n, width), "float32"), C: T.Tensor((n,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        acc = T.alloc_local((1,), "float32")
        for i in T.serial(n):
            acc[0] = 0.0
            for j in range(width):
                if j % 2 == 0:
                    acc[0] += A[i, j]
                else:
                    acc[0] -= A[i, j] * j
            for j in range(1, width, 3):
                acc[0] += A[i, j] * 100
            C[i] = acc[0]

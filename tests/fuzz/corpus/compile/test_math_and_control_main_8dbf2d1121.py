#!target hip gfx90a
#!func main
#!bind T = module(tilec.language)
#!bind n = 32
@T.prim_func
def main(A: T.Tensor((4, n), "float32"), B: T.Tensor((4, n), "float32")):
    with T.Kernel(1, threads=32) as bx:
        row = T.alloc_fragment((n,), "float32")
        for i in T.serial(4):
            if i >= 0:
                for i, j in T.Parallel(1, n):
                    row[j] = A[0, j] * 0 + i
            for j in T.Parallel(n):
                B[i, j] = A[i, j] + row[j] * 100 + i

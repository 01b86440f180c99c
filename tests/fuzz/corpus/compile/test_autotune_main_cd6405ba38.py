#!func main
#!bind T = module(tilec.language)
#!bind block = 64
#!bind factor = 2.0
#!bind n = 4096
#!bind reps = 20000
@T.prim_func
def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
    with T.Kernel(T.ceildiv(n, block)) as bx:
        for i in T.Parallel(block):
            acc = 0.0
            for r in T.serial(reps):
                acc = acc * 0.5 + A[(bx * block + i + r) % n]
            B[bx * block + i] = A[bx * block + i] * factor + acc * 0.0

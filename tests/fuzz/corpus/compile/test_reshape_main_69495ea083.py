#!func main
#!bind N = 16
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((N,), "int32"), B: T.Tensor((N,), "int32")):
    with T.Kernel(1, threads=32) as _:
        vals = T.alloc_local((N,), "int32")
        grid = T.reshape(vals, (N // 4, 4))
        for i in T.serial(N):
            vals[i] = A[i]
        for r in T.serial(N // 4):
            for c in T.serial(4):
                grid[r, c] = grid[r, c] + r
        for i in T.serial(N):
            B[i] = vals[i]

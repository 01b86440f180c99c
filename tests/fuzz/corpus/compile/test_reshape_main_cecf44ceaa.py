#!func main
#!bind M = 64
#!bind N = 2048
#!bind T = module(tilec.language)
#!bind dtype = "float32"
@T.prim_func
def main(A: T.Tensor((N,), dtype), B: T.Tensor((N // M, M), dtype), C: T.Tensor((N,), dtype)):
    with T.Kernel(1, threads=128) as _:
        flat = T.alloc_shared((N,), dtype)
        for i in T.Parallel(N):
            flat[i] = A[i]
        rows = T.reshape(flat, [N // M, M])
        T.copy(rows, B)
        # Written through the view, read through the buffer: the barrier between is the
        # buffer's.
        for r, c in T.Parallel(N // M, M):
            rows[r, c] = rows[r, c] * 2
        T.copy(flat, C)

#!target hip gfx940
#!func main
#!bind N = 64
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
    with T.Kernel(1, threads=64) as _:
        s = T.alloc_shared((N,), "float32")
        T.copy(A, s)
        square = T.reshape(s, (N // 8, 8))
        cube = T.view(square, (N // 16, 4, 4))
        for i, j, k in T.Parallel(N // 16, 4, 4):
            cube[i, j, k] = cube[i, j, k] + j
        T.copy(s, B)

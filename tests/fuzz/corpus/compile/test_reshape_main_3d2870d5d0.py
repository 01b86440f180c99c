#!target hip gfx90a
#!func main
#!bind M = 32
#!bind N = 1024
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N // M, M), "float32")):
    with T.Kernel(1, threads=128) as _:
        rows = T.reshape(A, [N // M, M])
        T.copy(rows, B)

#!target hip gfx906
#!func main
#!bind M = 64
#!bind N = 64
#!bind T = module(tilec.language)
#!bind tile = 16
@T.prim_func
def main(A: T.Tensor((M, N), "float16"), start: T.Tensor((1,), "int32"), O: T.Tensor((tile, N), "float16")):
    with T.Kernel(1, threads=128) as bx:
        row = T.alloc_fragment((1,), "int32", "local")
        A_s = T.alloc_shared((tile, N), "float16")
        row[0] = start[0]
        T.copy(A[row[0] % M, 0], A_s)
        T.copy(A_s, O)

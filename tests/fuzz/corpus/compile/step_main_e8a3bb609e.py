#!target hip gfx90a
#!func main
#!bind T = module(tilec.language)
#!bind keys = 131072
#!bind tokens = 4096
@T.prim_func
def main(CU_Q: T.Tensor((2,), "int32"), CU_KV: T.Tensor((2,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(2):
            CU_Q[i] = i * tokens
            CU_KV[i] = i * keys

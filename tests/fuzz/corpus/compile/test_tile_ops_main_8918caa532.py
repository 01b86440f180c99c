#!target hip gfx940
#!func main
#!bind T = module(tilec.language)
#!bind n = 40
#!bind value = -7
@T.prim_func
def main(F: T.Tensor((n,), "int32")):
    with T.Kernel(1, threads=128) as bx:
        f = T.alloc_fragment((n,), "int32")
        T.fill(f, value)
        T.copy(f, F)

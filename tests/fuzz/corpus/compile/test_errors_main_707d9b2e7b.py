#!target hip gfx90a
#!func main
#!bind T = module(tilec.language)
#!bind dtype = int32
@T.prim_func
def main(out: T.Tensor((4,), "float64"), value: dtype):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(4):
            out[i] = T.cast(value, "float64")

#!target hip gfx940
#!func main
#!bind M = 32
#!bind N = 32
#!bind T = module(tilec.language)
#!bind value = 2.5
@T.prim_func
def main(S: T.Tensor((1,), "float32"), F: T.Tensor((M, N), "float32"),
         Z: T.Tensor((M, N), "float32"), R: T.Tensor((M, N), "float32"),
         L: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        f = T.alloc_fragment((M, N), "float32")
        z = T.alloc_shared((M, N), "float32")
        r = T.alloc_fragment((M, N), "float32")
        loc = T.alloc_local((4,), "float32")
        T.fill(f, value)
        T.copy(f, F)
        T.fill(z, value)
        T.clear(z)
        T.copy(z, Z)
        T.fill(r, S[0] * 2)
        T.copy(r, R)
        T.fill(loc, value + 1)
        for i in T.serial(4):
            L[i] = loc[i]

#!target hip gfx906
#!func main
#!bind T = module(tilec.language)
#!bind n = sym(n)
@T.prim_func
def main(values: T.Tensor((n,), "float32"), total: T.Tensor((1,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        acc = T.alloc_local((1,), "float32")
        acc[0] = 0.0
        for i in T.serial(n):
            acc[0] += values[i]
        for i in range(n // 2):
            acc[0] += values[i * 2] * 10
        total[0] = acc[0]

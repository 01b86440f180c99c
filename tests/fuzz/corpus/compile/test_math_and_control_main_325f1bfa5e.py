#!target hip gfx940
#!func main
#!bind T = module(tilec.language)
#!bind n = 24
@T.prim_func
def main(A: T.Tensor((n,), "int32"), C: T.Tensor((n,), "int32")):
    with T.Kernel(1, threads=128) as bx:
        v = T.alloc_local((1,), "int32")
        steps = T.alloc_local((1,), "int32")
        for i in T.serial(n):
            v[0] = A[i]
            steps[0] = 0
            while v[0] != 1:
                if v[0] % 2 == 0:
                    v[0] = v[0] // 2
                else:
                    v[0] = 3 * v[0] + 1
                steps[0] += 1
            C[i] = steps[0]

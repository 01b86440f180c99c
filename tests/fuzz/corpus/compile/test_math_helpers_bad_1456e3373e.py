#!func bad
#!bind T = module(tilec.language)
#!bind tilec = module(tilec)
@T.prim_func
def bad(A: T.Tensor((4,), "int32")):
    with T.Kernel(1, threads=1) as bx:
        A[0] = tilec.math.prev_power_of_2(4)

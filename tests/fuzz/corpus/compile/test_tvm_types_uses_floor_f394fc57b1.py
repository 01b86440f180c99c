#!func uses_floor
#!bind T = module(tilec.language)
#!bind tirx = module(tilec.tvm.tirx)
@T.prim_func
def uses_floor(A: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=4) as bx:
        for i in T.Parallel(4):
            A[i] = tirx.floor(A[i])

#!target cuda sm_80
#!func copy_rows
#!config tilec.bounds_check=true
#!bind T = module(tilec.language)
@T.prim_func
def copy_rows(A: T.Tensor((100, 40), "float16"), B: T.Tensor((100, 40), "float16")):
    with T.Kernel(T.ceildiv(100, 32), threads=128) as bx:
        s = T.alloc_shared((32, 40), "float16")
        T.copy(A[bx * 32, 0], s)
        T.copy(s, B[bx * 32, 0])

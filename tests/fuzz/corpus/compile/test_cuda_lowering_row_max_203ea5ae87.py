#!target cuda sm_90a
#!func row_max
#!config tilec.wgmma=false
#!bind T = module(tilec.language)
@T.prim_func
# Rows of 512: each is spread over all four warps (4 elements a thread).
def row_max(X: T.Tensor((4, 512), "float32"), Y: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        x = T.alloc_fragment((4, 512), "float32")
        m = T.alloc_fragment((4,), "float32")
        T.copy(X, x)
        T.reduce_max(x, m, dim=1)
        T.copy(m, Y)

#!func exp2_of
#!config tl.Simplify={'enable_simplify_let_inline': False}
#!config tl.a_key_of_a_later_tilelang=true
#!config tl.disable_thread_storage_sync=true
#!config tl.ptxas_register_usage_level=10
#!bind T = module(tilec.language)
@T.prim_func
def exp2_of(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
    with T.Kernel(2, threads=128) as bx:
        for i in T.Parallel(128):
            B[bx * 128 + i] = T.exp2(A[bx * 128 + i]) / A[bx * 128 + i]

#!func dot_in_float32
#!bind T = module(tilec.language)
@T.prim_func
def dot_in_float32(A: T.Tensor((16,), "float16"), B: T.Tensor((16,), "int8"),
                   C: T.Tensor((1,), "float32")):
    # As gemv/example_gemv.py accumulates: TVM's PrimExpr.astype on elements and values.
    with T.Kernel(1, threads=1) as bx:
        acc = T.alloc_local((1,), "float32")
        acc[0] = 0.0
        for k in T.serial(16):
            acc[0] += A[k].astype("float32") * (B[k] + 1).astype(dtype=T.float32)
        C[0] = acc[0]

#!func lanes_of
#!bind DataType = module(tilec.DataType)
#!bind T = module(tilec.language)
#!bind X = tensor(float32, 4)
#!bind dtype = "float32"
#!bind tilec = module(tilec)
@tilec.jit(target="cpu")
def lanes_of(X, dtype="float16"):
    # As gemv/example_gemv.py sizes its tiles in the kernel's body.
    N = T.const("N")
    X: T.Tensor((N,), dtype)
    Y = T.empty((2,), "int32")
    TILE_K = 128 // DataType(dtype).bits
    with T.Kernel(1, threads=1) as bx:
        Y[0] = TILE_K
        Y[1] = tilec.DataType(X.dtype).bits
    return Y

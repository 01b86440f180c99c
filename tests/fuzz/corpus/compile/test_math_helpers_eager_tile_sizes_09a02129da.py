#!func eager_tile_sizes
#!bind T = module(tilec.language)
#!bind X = tensor(float32, 64)
#!bind block_S = 8
#!bind dim = 100
#!bind tilec = module(tilec)
@tilec.jit(target="cpu")
def eager_tile_sizes(X, dim: int, block_S: int = 8):
    # As deepseek_nsa/example_tilelang_nsa_fwd.py computes its tiles in the kernel's body.
    N = T.const("N")
    X: T.Tensor((N,), "float32")
    Y = T.empty((3,), "int32")
    block_T = min(128, tilec.math.next_power_of_2(dim))
    NK = tilec.cdiv(dim, block_T)
    with T.Kernel(1, threads=1) as bx:
        Y[0] = block_T
        Y[1] = NK + tilec.math.cdiv(N, block_S)
        Y[2] = tilec.next_power_of_2(N)
    return Y

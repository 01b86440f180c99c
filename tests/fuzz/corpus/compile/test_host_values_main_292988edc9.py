#!func main
#!bind T = module(tilec.language)
#!bind config = opaque(TileConfig)
#!bind math = opaque(module)
#!bind n = 64
#!bind scale = 0.17677669529663687
#!bind width = 32
@T.prim_func
def main(A: T.Tensor((n, width), "float32"), B: T.Tensor((n, width), "float32")):
    with T.Kernel(math.ceil(n / config.block), threads=128) as bx:
        for i, j in T.Parallel(config.block, width):
            if bx * config.block + i < n:
                B[bx * config.block + i, j] = A[bx * config.block + i, j] * scale + config.blocks(n)

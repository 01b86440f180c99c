#!target hip gfx90a
#!func eager_padded_groups
#!bind T = module(tilec.language)
#!bind X = tensor(float32, 10)
#!bind block = 4
#!bind jit = func(jit)
#!bind TARGET = "cpu"
#!bind _TestJitFunction = opaque(type)
#!bind sizes = (3, 1, 6)
@jit
def eager_padded_groups(X, sizes=(3, 1, 6), block: int = 4):
    # TileLang's grouped GEMM: the grid and the groups' offsets from comprehensions.
    total = sum(sizes)
    starts = [sum(sizes[:g]) for g in range(len(sizes))]
    tiles = [(size + block - 1) // block for size in sizes]
    X: T.Tensor((total,), "float32")
    Y = T.empty((sum(tiles) * block,), "float32")
    with T.Kernel(sum(t for t in tiles), threads=32) as bx:
        for g, (start, size) in enumerate(zip(starts, sizes)):
            first_tile = sum(tiles[:g])
            if bx >= first_tile and bx < first_tile + tiles[g]:
                for i in T.serial(block):
                    row = (bx - first_tile) * block + i
                    Y[bx * block + i] = T.if_then_else(row < size, X[start + row], 0.0)
    return Y


def jit(func=None, *, out_idx=None, pass_configs=None):
    """tilec.jit for the target under test (decorator, with or without
    arguments, or a call); records every kernel it compiles in RECORDED_KERNELS."""

    def wrap(f):
        return _TestJitFunction(f, out_idx=out_idx, target=TARGET, pass_configs=pass_configs)

    return wrap if func is None else wrap(func)

# An element of a float tensor as an index (table[table[i]]): the elaborator took it, and the
# generated C++ failed to compile (found by the jit mutant loop).

import tilec
import tilec.language as T


def factory(ROWS):
    @T.prim_func
    def main(table: T.Tensor((ROWS,), "float32"), picks: T.Tensor((8,), "int32"),
             out: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(8):
                out[i] = table[table[i]]
    return main


KERNEL = tilec.jit(factory, target="cpu")
ARGS = {'ROWS': 40}

# A constant index past int32 into a tile op's operand (S[9223372036854775807]): the region's
# int32 cast wrapped it, and its extent of 1 stayed a cast nothing recognized, so lowering
# indexed past its loop vars and segfaulted (found by the jit mutant loop in CI).

import tilec
import tilec.language as T


def factory(bins, block, n):
    @T.prim_func
    def main(V: T.Tensor((n,), "int32"), X: T.Tensor((n,), "float32"),
             H: T.Tensor((bins,), "int32"), S: T.Tensor((1,), "float32")):
        with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
            for i in T.serial(block):
                if bx * block + i < n:
                    T.atomic_add(H[V[bx * block + i]], 1)
                    T.atomic_add(S[9223372036854775807], X[bx * block + i])
    return main


KERNEL = tilec.jit(factory, target="cpu")
ARGS = {'bins': 7, 'block': 16, 'n': 256}

# A layout over a dim of 2^63 - 1 (T.Layout of a tensor with D = INT64_MAX): the product of its
# dims wrapped under the bijection check's limit, and the check enumerated without end (a hang
# the jit mutant loop found). It is now a located error.

import tilec
import tilec.language as T


def factory(D, L):
    @T.prim_func
    def main(A: T.Tensor((1, 1, L, D), "float32"), dQ: T.Tensor((1, 1, L, D), "float32"),
             B: T.Tensor((1, 1, L, D), "float32")):
        with T.Kernel(1, threads=32) as bx:
            T.annotate_layout({dQ: dq_layout(dQ)})
            for i, j in T.Parallel(L, D):
                dQ[0, 0, i, j] = A[0, 0, i, j]
        with T.Kernel(1, threads=32) as bx:
            T.annotate_layout({dQ: dq_layout(dQ)})
            for i, j in T.Parallel(L, D):
                B[0, 0, i, j] = dQ[0, 0, i, j] * 2.0


    def dq_layout(dQ):
        # TileLang's make_dq_layout (example_mha_bwd_bhsd.py): 8 x 8 blocks for atomic adds.
        return T.Layout(dQ.shape, lambda b, h, l, d: [b, h, l // 8, d // 8, (d % 2), 4 * (l % 8) + (d % 8) // 2])
    return main


KERNEL = tilec.jit(factory, target="cpu")
ARGS = {'D': 9223372036854775807, 'L': 16}

# A mutated decorator made `main` a T.Tensor type, which jit took and then
# failed on with AttributeError inside tilec; jit raises TypeError now.
import tilec
import tilec.language as T


@T.Tensor
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        A[0] = 1.0


KERNEL = tilec.jit(main, target="cpu")
ARGS = {}

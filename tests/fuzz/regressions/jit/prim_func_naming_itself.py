# A prim_func whose body names the prim_func itself: capturing its free names
# recursed until RecursionError; the name is an opaque value now, and the
# kernel fails to compile with a located error.
import tilec
import tilec.language as T


@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        main[0] = 1.0


KERNEL = tilec.jit(main, target="cpu")
ARGS = {}

#!func factory
#!bind n = 8
# A prim_func defined inside a factory the core evaluates: its closure held
# itself, a shared_ptr cycle, so the compile leaked (LeakSanitizer).
import tilec as tilelang
import tilec.language as T


@tilelang.jit
def factory(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1) as bx:
            A[0] = 1.0

    return main

#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((4,), "float32"), B: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        B[0] = A[0] * undefined_scale_xyz  # noqa: F821  ERR:unknown-free-variable

#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(C: T.Tensor((2,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        C[1] = T.atomic_add(C[0], 1, return_prev=True)  # ERR:block-return-prev

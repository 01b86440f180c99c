#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        xs = {i * 2 for i in range(4)}  # ERR:set-comprehension
        A[0] = len(xs)

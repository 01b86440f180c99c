#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((32, 32), "float32"), B: T.Tensor((32, 32), "float32")):
    with T.Kernel(1, threads=128) as bx:
        T.copy(A, B, prefer_instruction="ldmatrix")  # ERR:copy-prefer

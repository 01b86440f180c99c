#!target hip gfx90a
#!func main
#!bind T = module(tilec.language)
#!bind flag = True
#!bind mode = 0
#!bind n = 16
#!bind op = "neg"
@T.prim_func
def main(A: T.Tensor((n,), "float32"), C: T.Tensor((3, n), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.serial(n):
            if flag:
                C[0, i] = A[i] + 1
            else:
                C[0, i] = A[i] - 1
            if mode == 0:
                C[1, i] = A[i] * 2
            elif mode == 1:
                C[1, i] = A[i] * 3
            else:
                C[1, i] = A[i] * 4
            if op == "neg":
                C[2, i] = -A[i]
            else:
                C[2, i] = A[i]

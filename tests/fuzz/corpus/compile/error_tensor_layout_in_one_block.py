#!func main
# error: 10:5: this T.Kernel block uses tensor 'dQ', which T.annotate_layout at
import tilec.language as T

@T.prim_func
def main(dQ: T.Tensor((8, 8), "float32")):
    with T.Kernel(1) as bx:
        T.annotate_layout({dQ: T.Layout(dQ.shape, lambda i, j: [j, i])})
        for i, j in T.Parallel(8, 8):
            dQ[i, j] = 1.0
    with T.Kernel(1) as bx:
        for i, j in T.Parallel(8, 8):
            dQ[i, j] = dQ[i, j] + 1.0

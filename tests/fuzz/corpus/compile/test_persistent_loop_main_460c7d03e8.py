#!func main
#!bind T = module(tilec.language)
#!bind blocks = 16
#!bind group = 8
#!bind m = 4
#!bind n = 4
@T.prim_func
def main(count: T.Tensor((m, n), "int32"), owner: T.Tensor((m, n), "int32")):
    with T.Kernel(blocks, threads=32) as b:
        for i, j in T.Persistent([m, n], blocks, b, group):
            count[i, j] = count[i, j] + 1
            owner[i, j] = b

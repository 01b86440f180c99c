#!func main
#!bind T = module(tilec.language)
#!bind blocks = 4
#!bind group = 3
#!bind m = 5
#!bind n = 7
@T.prim_func
def main(count: T.Tensor((m, n), "int32"), owner: T.Tensor((m, n), "int32")):
    with T.Kernel(blocks, threads=32) as b:
        for i, j in T.Persistent([m, n], blocks, b, group):
            count[i, j] = count[i, j] + 1
            owner[i, j] = b

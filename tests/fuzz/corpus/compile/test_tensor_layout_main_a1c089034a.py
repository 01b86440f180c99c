#!func main
#!bind T = module(tilec.language)
#!bind error = "bijection"
#!bind n = sym(n)
@T.prim_func
def main(dQ: T.Tensor((16, 16), "float32"), dS: T.Tensor((n, 16), "float32")):
    with T.Kernel(1, threads=32) as bx:
        S = T.alloc_shared((16, 16), "float32")
        if error == "symbolic":
            T.annotate_layout({dS: T.Layout((16, 16), lambda i, j: [j, i])})  # ERR:symbolic
        elif error == "bijection":
            T.annotate_layout({dQ: T.Layout(dQ.shape, lambda i, j: [i // 2, j])})  # ERR:bijection
        elif error == "swizzled":
            T.annotate_layout({dQ: T.make_swizzled_layout(S)})  # ERR:swizzled
        else:
            T.annotate_layout({dQ: T.Layout(dQ.shape, lambda i, j: [j, i])})
        for i, j in T.Parallel(16, 16):
            dQ[i, j] = dQ[i, j] * 2.0
    with T.Kernel(1, threads=32) as bx:  # ERR:other_block
        if error == "another":
            T.annotate_layout({dQ: T.Layout(dQ.shape, lambda i, j: [j // 8, i, j % 8])})  # ERR:another
        for i, j in T.Parallel(16, 16):
            dQ[i, j] = dQ[i, j] + 1.0

#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(X: T.Tensor((32,), "int32")):
    v = T.alloc_var("int32")  # ERR:alloc-var-outside
    with T.Kernel(1, threads=32) as bx:
        X[0] = v

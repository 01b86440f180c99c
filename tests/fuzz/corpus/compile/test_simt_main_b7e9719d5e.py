#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(X: T.Tensor((32,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        v = T.alloc_var("int32", scope="shared")  # ERR:alloc-var-scope
        X[0] = v

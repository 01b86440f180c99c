#!func main
#!bind T = module(tilec.language)
#!bind k = 40
#!bind n = 32
@T.prim_func
def main(X: T.Tensor((n, k), "float32"), Y: T.Tensor((n,), "float32")):
    with T.Kernel(1, threads=n) as bx:
        tx = T.get_thread_binding()
        total = T.alloc_var("float32", 0.0)
        i = T.alloc_var("int32", 0)
        while i < k:
            x = X[tx, i]
            i += 1
            if x < 0:
                continue
            if x > 0.9:
                break
            total += x
        Y[tx] = total

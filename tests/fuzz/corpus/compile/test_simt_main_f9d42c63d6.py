#!target cuda sm_90a
#!func main
#!bind T = module(tilec.language)
#!bind n = 32
@T.prim_func
def main(X: T.Tensor((n, 4), "float32"), Y: T.Tensor((2, n), "float32")):
    with T.Kernel(1, threads=n) as bx:
        tx = T.get_thread_binding()
        total = T.alloc_var("float32")
        largest = T.alloc_var("float32")
        T.clear(total)
        T.fill(largest, -T.infinity("float32"))
        for k in T.serial(4):
            total = total + X[tx, k]
            largest = T.max(largest, X[tx, k])
        Y[0, tx] = total
        Y[1, tx] = largest

#!target cuda sm_90a
#!func main
#!bind T = module(tilec.language)
#!bind n = 64
@T.prim_func
def main(X: T.Tensor((n,), "float32"), Y: T.Tensor((4, n), "float32")):
    with T.Kernel(1, threads=n) as bx:
        tx = T.get_thread_binding()
        a = T.alloc_var("int32")
        b = T.alloc_var(T.int32, 7)
        c = T.alloc_var("float32", "local.var")
        d = T.alloc_var(T.float32, init=X[tx] * 2)
        a = X[tx]          # converted to the declared int32 (truncation), as a store would
        b[0] = b[0] + tx
        c = a + 0.5
        alias = d
        alias = alias + 1  # the same variable under another name
        Y[0, tx] = a
        Y[1, tx] = b
        Y[2, tx] = c
        Y[3, tx] = d

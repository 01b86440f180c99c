#!target cuda sm_90a
#!func main
#!bind T = module(tilec.language)
#!bind explicit_barrier = True
#!bind n = 128
@T.prim_func
def main(X: T.Tensor((n,), "int32"), Y: T.Tensor((n,), "int32")):
    with T.Kernel(1, threads=n) as bx:
        tx = T.get_thread_binding()
        s = T.alloc_shared((n,), "int32")
        s[tx] = X[tx] * 2
        if explicit_barrier:
            T.sync_threads()
        Y[tx] = s[(tx + 1) % n] + tx

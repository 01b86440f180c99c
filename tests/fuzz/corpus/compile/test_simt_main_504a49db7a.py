#!target hip gfx906
#!func main
#!bind T = module(tilec.language)
#!bind n = 128
@T.prim_func
def main(X: T.Tensor((n,), "int32"), Y: T.Tensor((n,), "int32")):
    with T.Kernel(1, threads=n) as bx:
        tx = T.get_thread_binding()
        s = T.alloc_shared((n,), "int32")
        v = T.alloc_var("int32")
        s[tx] = X[tx]
        step = 1
        for _ in T.serial(7):
            v = s[tx]
            if tx >= step:
                v = v + s[tx - step]
            T.sync_threads()
            s[tx] = v
            T.sync_threads()
            step *= 2
        Y[tx] = s[tx]

#!target cuda sm_90a
#!func main
#!config tilec.wgmma=false
#!bind T = module(tilec.language)
#!bind n = 128
@T.prim_func
def main(X: T.Tensor((n,), "float32"), S: T.Tensor((2,), "float32")):
    with T.Kernel(1, threads=n) as bx:
        tx = T.get_thread_binding()
        T.atomic_add(S[0], X[tx])  # each thread's own value: every thread adds it
        T.atomic_add(S[1], 1.0)    # the block's one update: once

#!target hip gfx90a
#!func main
#!bind T = module(tilec.language)
#!bind n = 128
@T.prim_func
def main(X: T.Tensor((n,), "int32"), Out: T.Tensor((n,), "int32"), Count: T.Tensor((1,), "int32")):
    with T.Kernel(1, threads=n) as bx:
        tx = T.get_thread_binding()
        count = T.alloc_shared((1,), "int32")
        if tx == 0:
            count[0] = 0
        if X[tx] > 0:
            slot = T.atomic_add(count[0], 1, return_prev=True, memory_order="relaxed")
            Out[slot] = X[tx]
        if tx == 0:
            Count[0] = count[0]

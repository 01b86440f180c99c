#!func main
#!bind T = module(tilec.language)
#!bind radix = 256
#!bind rows = 4
#!bind steps = 8
#!bind threads = 1024
@T.prim_func
def main(X: T.Tensor((rows, radix), "int32"), Y: T.Tensor((rows, radix), "int32")):
    with T.Kernel(rows, threads=threads) as bx:
        tx = T.get_thread_binding()
        h = T.alloc_shared([radix], "int32")
        v = T.alloc_var("int32")
        if tx < radix:
            h[tx] = X[bx, tx]
        T.sync_threads()
        if tx < radix:
            for i in T.serial(steps):
                offset = 1 << i
                T.sync_threads(3, radix)
                if tx < radix - offset:
                    v = h[tx] + h[tx + offset]
                T.sync_threads(3, radix)
                if tx < radix - offset:
                    h[tx] = v
        T.sync_threads()
        if tx < radix:
            Y[bx, tx] = h[tx]

#!target cuda sm_80
#!func main
#!bind T = module(tilec.language)
#!bind cols = 48
#!bind rows = 64
@T.prim_func
def main(X: T.Tensor((rows, cols), "int32"), limit: T.Tensor((rows,), "int32"), Y: T.Tensor((rows,), "int32")):
    with T.Kernel(1, threads=rows) as bx:
        tx = T.get_thread_binding()
        found = T.alloc_var("int32", -1)
        for j in T.serial(cols):
            if X[tx, j] > limit[tx]:
                found = j
                break
            found = -2 - j  # not reached once the row's element is found
        Y[tx] = found

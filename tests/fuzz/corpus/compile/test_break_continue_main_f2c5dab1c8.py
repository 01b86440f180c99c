#!target hip gfx90a
#!func main
#!bind T = module(tilec.language)
#!bind n = 32
@T.prim_func
def main(X: T.Tensor((n, 8), "int32"), Y: T.Tensor((n, 3), "int32")):
    with T.Kernel(1, threads=n) as bx:
        tx = T.get_thread_binding()
        for c, stop in enumerate((3, 5, 100)):  # unrolled while compiling
            if stop == 100:
                break  # a compile-time break: the third column is never written here
            count = T.alloc_var("int32", 0)
            for i in T.serial(8):
                for j in T.unroll(8):
                    if j > i:
                        break  # the inner loop's only
                    count += 1
                if X[tx, i] >= stop:
                    break
            Y[tx, c] = count
        Y[tx, 2] = 7

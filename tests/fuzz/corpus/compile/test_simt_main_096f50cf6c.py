#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(C: T.Tensor((2,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(2):
            T.atomic_add(C[i], 1, memory_order="seq_cst")  # ERR:memory-order

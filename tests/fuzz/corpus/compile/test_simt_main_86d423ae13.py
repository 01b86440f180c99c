#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(X: T.Tensor((32,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        T.sync_threads(barrier_id=1, arrive_count=16)  # ERR:named-barrier
        X[0] = 1

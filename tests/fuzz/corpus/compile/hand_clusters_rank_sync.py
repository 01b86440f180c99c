#!target cuda sm_90a
#!func main
#!bind T = module(tilec.language)
#!bind n = 8
import tilec.language as T


# Thread block clusters: the rank, a cluster barrier at the top level, one under a uniform
# condition, and values computed from the rank (what a condition for a barrier may not use).
@T.prim_func
def main(X: T.Tensor((n, 128), "float32"), Y: T.Tensor((n, 128), "float32"), flag: T.int32):
    with T.ClusterKernel(n, threads=128, cluster_dims=(2, 1, 1)) as bx:
        tx = T.get_thread_binding()
        rank = T.block_rank_in_cluster()
        peer = bx - rank + 1 - rank
        Y[bx, tx] = X[bx, tx] * 2
        T.cluster_sync()
        v = Y[peer, tx]
        if flag > 0:
            T.cluster_sync()
        for i in T.serial(2):
            T.cluster_sync()
        Y[bx, tx] = v + rank

#!func main
#!bind T = module(tilec.language)
#!bind n = 256
import tilec.language as T


# hand_clusters_peer_copy.py for the CPU, which runs a cluster's blocks as fibers of one thread:
# cluster barriers, a copy into the peer's tile that arrives at its barrier, arrivals at the
# peer's barrier, waits on the block's own.
@T.prim_func
def main(X: T.Tensor((8, n), "float32"), Out: T.Tensor((8, n), "float32")):
    with T.Kernel(8, threads=128, cluster_dims=2) as bx:
        row = T.alloc_shared((n,), "float32")
        mine = T.alloc_shared((n,), "float32")
        full = T.alloc_cluster_barrier(1)
        empty = T.alloc_cluster_barrier(128)
        rank = T.block_rank_in_cluster()
        peer = 1 - rank
        T.copy(X[bx, :], mine)
        T.copy_cluster(mine, row, dst_block=peer, remote_barrier=full)
        for step in T.serial(3):
            T.mbarrier_wait_parity(full, step % 2)
            for i in T.Parallel(n):
                mine[i] = row[i] + rank + 1
            T.mbarrier_arrive(empty, cta_id=peer)
            T.mbarrier_wait_parity(empty, step % 2)
            T.copy_cluster(mine[0:n // 2], row[0:n // 2], dst_block=peer, remote_barrier=full)
        T.mbarrier_wait_parity(full, 1)
        T.copy(row, Out[bx, :])

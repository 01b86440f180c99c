# A view of an empty shared tile (M = 0: T.reshape of a (0,) buffer to (0, 32)): binding the
# layout the view and its buffer share made a row-major layout of no rows, which threw past the
# compiler's errors (found by the jit mutant loop in CI). Built for CUDA, the same tile as a
# gemm operand got a panel layout of no rows.

import tilec
import tilec.language as T


def factory(K, M, N, block_K, stages):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as _:
            A_flat = T.alloc_shared((M * block_K,), "float16")
            A_tile = T.reshape(A_flat, (M, block_K))
            B_shared = T.alloc_shared((block_K, N), "float16")
            C_local = T.alloc_fragment((M, N), "float32")
            T.clear(C_local)
            for k in T.Pipelined(K // block_K, num_stages=stages):
                for i, j in T.Parallel(M, block_K):
                    A_flat[i * block_K + j] = A[i, k * block_K + j]
                T.copy(B[k * block_K, 0], B_shared)
                T.gemm(A_tile, B_shared, C_local)
            T.copy(C_local, C)
    return main


KERNEL = tilec.jit(factory, target="cpu")
ARGS = {'K': 128, 'M': 0, 'N': 64, 'block_K': 32, 'stages': 1}

#!target cuda sm_90a
#!func main
# cluster_dims=(2 ** 40, 2 ** 40): the extents' product overflowed int64 (UBSan) before the
# size limit was checked; each extent is now checked first
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((8, 128), "float32")):
    with T.Kernel(8, threads=128, cluster_dims=(2 ** 40, 2 ** 40)) as bx:
        A[bx, 0] = 1.0

#!target cuda sm_90a
#!func main
#!bind T = module(tilec.language)
#!bind n = 96
import tilec.language as T


@T.prim_func
def main(KV: T.Tensor((n, 16), "float32"), Idx: T.Tensor((32,), "int32"), dKV: T.Tensor((n, 16), "float32")):
    with T.Kernel(4, threads=128) as b:
        rows = T.alloc_shared((32, 16), "float32")
        for i, j in T.Persistent([4, 2], 4, b, 3):
            H0 = i * 8 + j
            H1 = H0 + 8
            for r, c in T.Parallel(8, 16):
                rows[r, c] = KV[Idx[H0 + r], c] * 2
            for r, c in T.Parallel(8, 4):
                T.atomic_addx4(dKV[Idx[H0:H1][0] + r, c * 4], rows[r, c * 4])

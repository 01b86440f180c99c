#!target hip gfx940
#!func main
#!bind T = module(tilec.language)
#!bind block_rows = 16
#!bind cols = 64
#!bind n = sym(n)
@T.prim_func
def main(A: T.Tensor((n, cols), "float32"), S: T.Tensor((n,), "float32")):
    with T.Kernel(T.ceildiv(n, block_rows), threads=128) as bx:
        A_frag = T.alloc_fragment((block_rows, cols), "float32")
        S_frag = T.alloc_fragment((block_rows,), "float32")
        T.copy(A[bx * block_rows, 0], A_frag)
        T.reduce_sum(A_frag, S_frag, dim=1)
        T.copy(S_frag, S[bx * block_rows])

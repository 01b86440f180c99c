#!target hip gfx940
#!func main
#!bind A_shape = (128, 32)
#!bind A_tile = (64, 32)
#!bind B_shape = (32, 128)
#!bind B_tile = (32, 64)
#!bind M = 128
#!bind N = 128
#!bind T = module(tilec.language)
#!bind block_M = 64
#!bind block_N = 64
#!bind dtype = "bfloat16"
#!bind in_registers = "A"
#!bind trans_A = False
#!bind trans_B = False
#!bind via_shared = True
@T.prim_func
def main(A: T.Tensor(A_shape, dtype), B: T.Tensor(B_shape, dtype), C: T.Tensor((M, N), "float32")):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_s = T.alloc_shared(A_tile, dtype)
        B_s = T.alloc_shared(B_tile, dtype)
        A_f = T.alloc_fragment(A_tile, dtype)
        B_f = T.alloc_fragment(B_tile, dtype)
        C_f = T.alloc_fragment((block_M, block_N), "float32")
        if trans_A:
            T.copy(A[0, by * block_M], A_s)
        else:
            T.copy(A[by * block_M, 0], A_s)
        if trans_B:
            T.copy(B[bx * block_N, 0], B_s)
        else:
            T.copy(B[0, bx * block_N], B_s)
        if in_registers == "A":
            if via_shared:
                T.copy(A_s, A_f)
            elif trans_A:
                T.copy(A[0, by * block_M], A_f)
            else:
                T.copy(A[by * block_M, 0], A_f)
            T.gemm(A_f, B_s, C_f, transpose_A=trans_A, transpose_B=trans_B, clear_accum=True)
        else:
            if via_shared:
                T.copy(B_s, B_f)
            elif trans_B:
                T.copy(B[bx * block_N, 0], B_f)
            else:
                T.copy(B[0, bx * block_N], B_f)
            T.gemm(A_s, B_f, C_f, transpose_A=trans_A, transpose_B=trans_B, clear_accum=True)
        T.copy(C_f, C[by * block_M, bx * block_N])

#!target hip gfx90a
#!func main
#!bind M = 48
#!bind N = 61
#!bind T = module(tilec.language)
#!bind dim = 0
#!bind dtype = "float32"
#!bind in_place = False
#!bind reverse = False
#!bind scope = "shared"
#!bind threads = 128
@T.prim_func
def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
    with T.Kernel(1, threads=threads) as bx:
        if scope == "shared":
            S = T.alloc_shared((M, N), dtype)
            D = T.alloc_shared((M, N), dtype)
        elif scope == "fragment":
            S = T.alloc_fragment((M, N), dtype)
            D = T.alloc_fragment((M, N), dtype)
        else:  # a shared source into a fragment
            S = T.alloc_shared((M, N), dtype)
            D = T.alloc_fragment((M, N), dtype)
        T.copy(A, S)
        if in_place:
            T.cumsum(S, dim=dim, reverse=reverse)
            T.copy(S, B)
        else:
            T.cumsum(src=S, dst=D, dim=dim, reverse=reverse)
            T.copy(D, B)

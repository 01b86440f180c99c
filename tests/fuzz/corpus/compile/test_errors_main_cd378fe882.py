#!func main
#!bind T = module(tilec.language)
#!bind fault = "dim"
@T.prim_func
def main(A: T.Tensor((8, 16), "float32"), B: T.Tensor((8, 16), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((8, 16), "float32")
        B_f = T.alloc_fragment((8, 16), "float32")
        H_s = T.alloc_shared((8, 16), "float16")
        W_f = T.alloc_fragment((16, 8), "float32")
        T.copy(A, A_s)
        if fault == "dim":
            T.cumsum(A_s, B_f, dim=2)  # ERR:cumsum-dim
        elif fault == "negative-dim":
            T.cumsum(A_s, dim=-3)  # ERR:cumsum-negative-dim
        elif fault == "dtype":
            T.cumsum(A_s, H_s)  # ERR:cumsum-dtype
        elif fault == "shape":
            T.cumsum(A_s, W_f, dim=1)  # ERR:cumsum-shape
        elif fault == "global":
            T.cumsum(A, A_s)  # ERR:cumsum-global
        else:
            T.cumsum(A_s[0, 0], B_f)  # ERR:cumsum-point
        T.copy(B_f, B)

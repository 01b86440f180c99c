#!target cuda sm_80
#!func main
#!bind T = module(tilec.language)
#!bind dst_dtype = "int32"
#!bind n = 200
#!bind src_dtype = "float32"
@T.prim_func
def main(X: T.Tensor((n,), src_dtype), Y: T.Tensor((n,), dst_dtype), Z: T.Tensor((n,), src_dtype)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(n):
            bits = T.reinterpret(X[i], dst_dtype)
            Y[i] = bits
            Z[i] = T.reinterpret(bits, src_dtype)

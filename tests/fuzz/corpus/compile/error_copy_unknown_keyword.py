#!func main
# error: 7:22: T.copy() got an unexpected keyword argument 'foo' (its arguments: src, dst, coalesced_width, disable_tma, eviction_policy, prefer_instruction)
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        T.copy(A, B, foo=1)

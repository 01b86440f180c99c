#!func main
# error: 5:10: parameter 'A' needs a type: 'A: T.Tensor((M, K), dtype)' or 'n: T.int32'
import tilec.language as T

@T.prim_func
def main(A):
    with T.Kernel(1) as bx:
        pass

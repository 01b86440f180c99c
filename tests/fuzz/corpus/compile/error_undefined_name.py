#!func main
# error: 7:16: name 'undefined_thing' is not defined
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        A[0] = undefined_thing

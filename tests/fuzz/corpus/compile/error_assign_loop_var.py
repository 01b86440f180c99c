#!func main
# error: 8:13: cannot assign to loop variable 'i'
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        for i in T.serial(8):
            i = 3

#!func main
# error: 7:28: T.alloc_shared: this buffer needs more than 64 MiB; on-chip buffers are far smaller (shared memory is 227 KiB per block on Hopper)
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        s = T.alloc_shared((65536, 65536), "float32")

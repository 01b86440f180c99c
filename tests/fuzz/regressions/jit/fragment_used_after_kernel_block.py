# A tile op after the T.Kernel block that reads the block's fragment: verify's
# internal compiler error ("buffer 'f' is used outside its allocation") instead
# of a located error.
import tilec
import tilec.language as T


@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        f = T.alloc_fragment((8,), "float32")
        T.fill(f, 0)
    T.copy(f, A)


KERNEL = tilec.jit(main, target="cpu")
ARGS = {}

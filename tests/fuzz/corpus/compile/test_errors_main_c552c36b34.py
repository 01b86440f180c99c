#!func main
#!bind T = module(tilec.language)
#!bind case = "twice"
@T.prim_func
def main(A: T.Tensor((64, 64), "float32")):
    if case == "outside":
        T.use_swizzle(2)  # ERR:swizzle-outside
    if case != "outside":
        with T.Kernel(2, 2, threads=128) as (bx, by):
            if case == "twice":
                T.use_swizzle(2)
                T.use_swizzle(4)  # ERR:swizzle-twice
            elif case == "order":
                T.use_swizzle(2, order="diagonal")  # ERR:swizzle-order
            else:
                T.use_swizzle(0)  # ERR:swizzle-panel
            A[bx, by] = 1.0

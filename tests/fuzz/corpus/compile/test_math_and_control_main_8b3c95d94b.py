#!target hip gfx906
#!func main
#!bind T = module(tilec.language)
#!bind axpy = func(axpy)
#!bind axpy_twice = func(axpy_twice)
#!bind block = 16
#!bind load = func(load)
#!bind n = 32
@T.prim_func
def main(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32"),
         S: T.Tensor((1,), "float32"), Z: T.Tensor((n,), "float32")):
    with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
        x_f = T.alloc_fragment((block,), "float32")
        y_f = T.alloc_fragment((block,), "float32")
        load(x_f, X, bx * block)
        load(y_f, Y, bx * block)
        axpy(y_f, x_f, 2.0, block)
        axpy_twice(y_f, x_f, S[0] * 0.5, block)
        T.copy(y_f, Z[bx * block])


@T.macro
def axpy(dst, src, alpha, n):
    for i in T.Parallel(n):
        dst[i] = dst[i] + alpha * src[i]


@T.macro
def axpy_twice(dst, src, alpha, n):
    axpy(dst, src, alpha, n)
    axpy(dst, src, alpha, n)


@T.macro
def load(dst, src, start):
    T.copy(src[start], dst)

#!target hip gfx906
#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(Y: T.Tensor((3, 4, 8), "int32")):
    with T.Kernel(3, 4, threads=(8, 4, 2)) as (bx, by):
        tx, ty, tz = T.get_thread_bindings()
        ex, ey, ez = T.get_thread_extents()
        if ty == 0 and tz == 0:
            Y[bx, by, tx] = (T.get_block_binding(0) * 1000 + T.get_block_binding(1) * 100
                             + ex * ey * ez + T.get_block_extent(0) * 10 + T.get_block_extent(2)
                             + T.get_thread_extent(1) * 10000)

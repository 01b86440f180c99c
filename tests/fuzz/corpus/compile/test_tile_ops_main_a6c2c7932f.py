#!target hip gfx940
#!func main
#!bind T = module(tilec.language)
#!bind lanes = 4
#!bind picks = 20
#!bind rows = 12
#!bind sliced = False
#!bind width = 16
@T.prim_func
def main(idx: T.Tensor((picks,), "int32"), src: T.Tensor((picks, width), "float32"),
         dst: T.Tensor((rows, width), "float32")):
    with T.Kernel(1, threads=64) as bx:
        s = T.alloc_shared((picks, width), "float32")
        T.copy(src, s)
        for i, d in T.Parallel(picks, width // lanes):
            if sliced:
                T.atomic_addx4(dst[idx[i], d * 4:d * 4 + 4], s[i, d * 4:d * 4 + 4])
            elif lanes == 4:
                T.atomic_addx4(dst[idx[i], d * 4], s[i, d * 4])
            else:
                T.atomic_addx2(dst[idx[i], d * 2], s[i, d * 2])

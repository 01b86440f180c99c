#!target hip gfx90a
#!func kernel_func
#!bind T = module(tilec.language)
#!bind b = sym(b)
#!bind d = 16
#!bind h = 4
#!bind m = sym(m)
#!bind n = sym(n)
@T.prim_func
def kernel_func(
    q: T.Tensor[(b, m, h, d), "float16"],
    k: T.Tensor[(b, n, d), "float16"],
    scores: T.Tensor[(b, m, n), "float32"]
):
    # 闪电索引器计算
    with T.Kernel(b, m) as (i_b, i_m):
        q_frag = T.alloc_fragment((h, d), "float16")
        k_frag = T.alloc_fragment((d,), "float16")
        score_frag = T.alloc_fragment((h,), "float32")

        T.copy(q[i_b, i_m, 0, 0], q_frag)

        for i_n in T.Pipelined(n):
            T.copy(k[i_b, i_n, 0], k_frag)
            T.gemv(q_frag, k_frag, score_frag)  # 计算相关性分数
            scores[i_b, i_m, i_n] = score_frag[0]  # 存储分数

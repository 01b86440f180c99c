#!target hip gfx906
#!func main
#!bind T = module(tilec.language)
#!bind sequences = 3
#!bind threads = 128
#!bind tokens = 4096
@T.prim_func
def main(CU_Q: T.Tensor((sequences + 1,), "int32"), CU_KV: T.Tensor((sequences + 1,), "int32"),
         KS: T.Tensor((tokens,), "int32"), KE: T.Tensor((tokens,), "int32")):
    with T.Kernel(T.ceildiv(tokens, threads), threads=threads) as bx:
        tx = T.get_thread_binding()
        t = bx * threads + tx
        if t < tokens:
            b = T.alloc_var("int32", 0)
            for s in T.serial(sequences):
                if CU_Q[s + 1] <= t:
                    b = s + 1
            b = T.min(b, sequences - 1)
            n_q = CU_Q[b + 1] - CU_Q[b]
            n_kv = CU_KV[b + 1] - CU_KV[b]
            KS[t] = CU_KV[b]
            KE[t] = CU_KV[b] + T.max(T.min(t - CU_Q[b] + 1 + n_kv - n_q, n_kv), 0)

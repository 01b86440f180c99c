"""A kernel with a shared-memory race on purpose: every thread writes s[0], then reads it.

bench/sanitize.sh runs it under racecheck before the tests, with the same kernel filter, and
expects hazards: a racecheck run that reports none here checks nothing.
"""

import torch

import tilec
import tilec.language as T


@T.prim_func
def racy(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        s = T.alloc_shared((1,), "float32")
        for i in T.Parallel(128):
            s[0] = A[i]
            B[i] = s[0]


kernel = tilec.compile(racy, target="cuda")
a = torch.randn(128, device="cuda")
b = torch.empty(128, device="cuda")
kernel(a, b)
torch.cuda.synchronize()

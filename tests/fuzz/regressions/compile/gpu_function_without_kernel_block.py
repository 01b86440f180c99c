#!target cuda sm_80
#!func main
# The compile fuzzer's find (seed 20261201): a prim_func whose body has no T.Kernel block
# reached the CUDA code generator, which threw an uncaught std::logic_error.
import tilec.language as T


@T.prim_func
def main(X: T.Tensor((5, 4, 24), "float32"), R: T.Tensor((5, 24), "float32")):
    32

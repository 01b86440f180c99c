#!func main
#!bind T = module(tilec.language)
#!bind case = "runtime_argument"
#!bind math = opaque(module)
@T.prim_func
def main(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        for i in T.Parallel(64):
            if case == "runtime_argument":
                A[i] = math.sqrt(A[i])  # ERR:host-runtime-argument
            elif case == "raises":
                A[i] = math.sqrt(-1.0)  # ERR:host-raises
            elif case == "no_attribute":
                A[i] = math.no_such_function(2.0)  # ERR:host-no-attribute
            else:
                A[i] = math  # ERR:host-as-value

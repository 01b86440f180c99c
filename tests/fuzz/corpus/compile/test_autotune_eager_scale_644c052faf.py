#!func eager_scale
#!bind M = 4096
#!bind T = module(tilec.language)
#!bind autotune = func(autotune)
#!bind AutotunedFunction = opaque(type)
#!bind JitFunction = opaque(type)
#!bind PrimFunc = opaque(type)
#!bind inspect = opaque(module)
#!bind jit_module = opaque(module)
#!bind block_M = 32
#!bind tilec = module(tilec)
@autotune(configs=[{"block_M": 16}, {"block_M": 32}], warmup=1, rep=2)
@tilec.jit(target="cpu")
def eager_scale(A, block_M=16):
    M = T.const("M")
    A: T.Tensor((M,), "float32")
    B = T.empty((M,), "float32")
    with T.Kernel(T.ceildiv(M, block_M)) as bx:
        for i in T.Parallel(block_M):
            B[bx * block_M + i] = A[bx * block_M + i] * 2
    return B


def autotune(func=None, *, configs, warmup=25, rep=100, timeout=100, supply_type=None,
             ref_prog=None, supply_prog=None, rtol=1e-2, atol=1e-2, max_mismatched_ratio=0.01,
             skip_check=False, manual_check_prog=None, cache_input_tensors=False,
             do_not_specialize=None, early_stop=False, early_stop_factor=2.0, disk_cache=True):
    """@autotune(configs=...) over a tilec.jit function (or a plain one).
    configs: a list of dicts of tuned arguments, or a function of the call's
    arguments returning one. do_not_specialize: arguments whose values share
    one tuning. The rest are AutoTuner.set_profile_args' and run's."""
    if func is not None:
        raise TypeError("tilec.autotune takes its configs by name: write "
                        "@autotune(configs=...) above @tilec.jit")
    settings = dict(configs=configs, warmup=warmup, rep=rep, timeout=timeout,
                    supply_type=supply_type, ref_prog=ref_prog, supply_prog=supply_prog,
                    rtol=rtol, atol=atol, max_mismatched_ratio=max_mismatched_ratio,
                    skip_check=skip_check, manual_check_prog=manual_check_prog,
                    cache_input_tensors=cache_input_tensors,
                    do_not_specialize=tuple(do_not_specialize or ()), early_stop=early_stop,
                    early_stop_factor=early_stop_factor, disk_cache=disk_cache)

    def decorate(function):
        if isinstance(function, JitFunction):
            return AutotunedFunction(function, settings)
        if isinstance(function, PrimFunc) or not inspect.isfunction(function):
            raise TypeError(f"tilec.autotune goes over a jit function (a factory or an eager "
                            f"kernel), not a {type(function).__qualname__}")
        return AutotunedFunction(jit_module.jit(function), settings)

    return decorate

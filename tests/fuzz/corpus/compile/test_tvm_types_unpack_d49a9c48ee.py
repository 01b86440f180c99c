#!func unpack
#!bind T = module(tilec.language)
#!bind nibble_as_float = func(nibble_as_float)
#!bind tirx = module(tilec.tvm.tirx)
#!bind tvm = module(tilec.tvm)
@T.prim_func
def unpack(P: T.Tensor((64,), "uint8"), Lo: T.Tensor((64,), "float32"),
           Hi: T.Tensor((64,), "float32"), Bits: T.Tensor((64,), "int32"),
           X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        for i in T.Parallel(64):
            Lo[i] = nibble_as_float(P[i], 0, "float32")
            Hi[i] = tvm.tirx.Select(P[i] > 127, nibble_as_float(P[i], 1, "float32"), -1.0)
            Bits[i] = tirx.reinterpret("int32", X[i])


def nibble_as_float(packed: tirx.PrimExpr, position: int, dtype: str):
    # In the manner of dequantize_gemm/quantize/quantization.py's converters (which shift and
    # mask: tilec's kernels have no runtime bit operators yet, so this divides).
    sixteen = tirx.const(16, "uint8")
    nibble = packed % sixteen if position == 0 else packed // sixteen
    return tirx.Cast(dtype, tirx.Min(nibble, tirx.const(7, "uint8")))

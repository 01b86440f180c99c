"""tilec.ops.dsa against references in numpy, on the GPU where there is one, else on the CPU;
and each kernel built for sm_90a through NVRTC."""

import ml_dtypes
import numpy as np
import pytest

from tilec.ops import dsa
from tilec.ops.dsa.quant import act_quant_kernel

from helpers import build_for_cuda, rand, rng  # noqa: F401  (rng is a fixture)
from test_ops import on_target, to_numpy


def act_quant_reference(x, block_size, scale_fmt):
    """DeepSeek's act_quant in float32: s = max(amax, 1e-4) / 448 a block (rounded up to a power
    of two for "ue8m0"), y = clamp(x / s, +-448) rounded to float8_e4m3fn."""
    x = x.astype(np.float32)
    groups = -(-x.shape[-1] // block_size)
    padded = np.zeros(x.shape[:-1] + (groups * block_size,), np.float32)
    padded[..., :x.shape[-1]] = x
    blocks = padded.reshape(x.shape[:-1] + (groups, block_size))
    scale = np.maximum(np.abs(blocks).max(-1), np.float32(1e-4)) / np.float32(448)
    if scale_fmt == "ue8m0":
        scale = np.exp2(np.ceil(np.log2(scale.astype(np.float64)))).astype(np.float32)
    y = np.clip(blocks / scale[..., None], -448, 448).reshape(padded.shape)[..., :x.shape[-1]]
    return y.astype(ml_dtypes.float8_e4m3fn), scale.astype(np.float32)


@pytest.mark.parametrize("shape,block_size", [((61, 200), 128), ((3, 5, 256), 128), ((1, 7), 128),
                                              ((213, 96), 64), ((2, 1521), 128)])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("scale_fmt", [None, "ue8m0"])
def test_act_quant_matches_deepseeks_arithmetic_bit_for_bit(shape, block_size, dtype, scale_fmt, rng):
    # Magnitudes from 1e-3 to 1e3 a row, so that blocks get scales far apart; row 0 is zeros
    # (every block of it gets the smallest scale, and y = 0).
    magnitude = 10.0 ** rng.uniform(-3, 3, size=shape[:-1] + (1,))
    x = (rand(shape, "float32", rng) * magnitude).astype(rand((1,), dtype, rng).dtype)
    x.reshape(-1, shape[-1])[0] = 0
    y, s = dsa.act_quant(*on_target(x), block_size=block_size, scale_fmt=scale_fmt)
    y, s = to_numpy(y, "float8_e4m3"), to_numpy(s, "float32")
    ref_y, ref_s = act_quant_reference(x, block_size, scale_fmt)
    assert y.shape == shape and s.shape == ref_s.shape
    np.testing.assert_array_equal(s, ref_s)
    np.testing.assert_array_equal(y.view(np.uint8), ref_y.view(np.uint8))
    # and it is a quantization of x: within half an e4m3 step (2^-4 relative) of it, where the
    # block's largest value maps to 448 or, with power-of-two scales, above 224
    dequantized = y.astype(np.float32) * np.repeat(s, block_size, axis=-1)[..., :shape[-1]]
    assert np.all(np.abs(dequantized - x.astype(np.float32))
                  <= np.abs(x.astype(np.float32)) / 16 + np.repeat(s, block_size, axis=-1)[..., :shape[-1]] / 2 ** 9)


@pytest.mark.parametrize("call,message", [
    (lambda x: dsa.act_quant(x, scale_fmt="e8m0"), r"scale_fmt must be None or 'ue8m0', not 'e8m0'"),
    (lambda x: dsa.act_quant(x, block_size=100), r"block_size must be a power of two from 16 to 512, not 100"),
    (lambda x: dsa.act_quant(x, block_size=True), r"block_size must be a power of two from 16 to 512, not True"),
    (lambda x: dsa.act_quant(x.astype(np.int32)), r"x must be float32, float16 or bfloat16, not int32"),
    (lambda x: dsa.act_quant(x[:0]), r"x must have at least one dim and no empty one, not shape \(0, 128\)"),
])
def test_act_quant_errors_name_the_argument(call, message, rng):
    with pytest.raises(ValueError, match=message):
        call(rand((4, 128), "float32", rng))


@pytest.mark.parametrize("pow2_scale", [False, True])
def test_act_quant_builds_for_sm90a(pow2_scale):
    # DeepSeek-V3.2's shape: 4096 tokens of its 7168-wide hidden state. The power-of-two scale
    # is made from the bits, with no approximate log2 to land a power of two one step low.
    source = build_for_cuda(act_quant_kernel, "sm_90a", M=4096, N=7168, dtype="bfloat16", pow2_scale=pow2_scale)
    assert ("reinterpret<float>" in source) == pow2_scale and "log2" not in source

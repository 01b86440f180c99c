"""The float8 types of the current platform (tilelang.language.fp8)."""

import importlib.util

from . import float8_e4m3fn, float8_e5m2


def determine_fp8_type(fp8_format="e4m3"):
    """The float8 dtype of `fp8_format` ("e4m3" or "e5m2") on this platform: on CUDA (and
    without torch) T.float8_e4m3fn or T.float8_e5m2. On ROCm, gfx950 uses those too; earlier
    AMD GPUs use the FNUZ variants, which tilec lacks (a ValueError says so)."""
    if fp8_format not in ("e4m3", "e5m2"):
        raise ValueError(f"determine_fp8_type: fp8_format {fp8_format!r} is neither 'e4m3' "
                         f"nor 'e5m2'")
    ocp = float8_e4m3fn if fp8_format == "e4m3" else float8_e5m2
    if importlib.util.find_spec("torch") is None:
        return ocp
    import torch

    if torch.version.hip is None:
        return ocp
    arch = ""
    if torch.cuda.is_available():
        arch = getattr(torch.cuda.get_device_properties(0), "gcnArchName", "")
    if arch.startswith("gfx950"):
        return ocp
    raise ValueError(f"this ROCm GPU ({arch or 'none visible'}) uses float8_{fp8_format}fnuz, "
                     f"which tilec has no type for (it has float8_e4m3 and float8_e5m2)")


def determine_torch_fp8_type(fp8_format="e4m3"):
    """The torch dtype of determine_fp8_type(fp8_format)."""
    return determine_fp8_type(fp8_format).as_torch()


__all__ = ["determine_fp8_type", "determine_torch_fp8_type"]

"""MatmulTemplate: a GEMM C[M, N] = A[M, K] @ B[K, N] (tilelang.carver.template.MatmulTemplate)
that recommends tensor-core tile configurations for a device.

How hints are ranked: each candidate (block tile, warp split, block_K, stages) that fits the
device's shared memory and registers gets an estimated time,

    waves * blocks_per_sm * K * max(2 * block_M * block_N, balance * (block_M + block_N) * bytes)

(the output tiles in waves of multiprocessors x resident blocks; a tile's time is its
tensor-core work or its operand traffic, whichever is larger, `balance` being the device's
flops per byte of operand bandwidth), divided by a latency-hiding factor that grows with the
pipeline's stages and the resident blocks. Hopper (sm_90) candidates are warpgroup shaped
(block_M a multiple of 64 per warpgroup, block_K of 128 bytes); Ampere-class ones take mma.sync
warp tiles of 32 or more rows. The best `topk` come first; an autotuner then measures them."""

import dataclasses
import math

from ...datatype import DataType
from ..roller.hint import Hint
from ..roller.rasterization import NoRasterization, Rasterization2DColumn
from .base import BaseTemplate
from .matmul_kernel import matmul_prim_func

# Shared memory one block may opt in to, by compute capability (bytes); the device
# description's max_smem_usage where the version is not listed.
_SMEM_PER_BLOCK = {90: 227 * 1024, 80: 163 * 1024, 87: 163 * 1024, 86: 99 * 1024, 89: 99 * 1024}
_SMEM_PER_SM = {90: 228 * 1024, 80: 164 * 1024, 87: 164 * 1024, 86: 100 * 1024, 89: 100 * 1024}
# Tensor-core flops per byte of operand bandwidth (L2 and DRAM together): where a tile's
# operand traffic, not its math, bounds it.
_BALANCE = {"hopper": 128, "ampere": 80, "cdna": 64}
_ACCUMULATOR_REGISTERS = 128  # per thread, leaving room for addresses and the pipeline
_RASTER_PANEL = 10


@dataclasses.dataclass
class MatmulTemplate(BaseTemplate):
    """M, N, K: the GEMM's sizes (positive ints); trans_A: A is stored (K, M); trans_B: B is
    stored (N, K) (the default, as TileLang's); in_dtype, out_dtype, accum_dtype: the
    operands', the result's and the accumulator's types; with_bias: C += Bias[N]."""

    M: int = None
    N: int = None
    K: int = None
    trans_A: bool = False
    trans_B: bool = True
    in_dtype: str = "float16"
    out_dtype: str = "float16"
    accum_dtype: str = "float16"
    with_bias: bool = False

    def __post_init__(self):
        for name in ("M", "N", "K"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"MatmulTemplate: {name} is a positive int, not {value!r}")
        for name in ("in_dtype", "out_dtype", "accum_dtype"):
            DataType(getattr(self, name))  # a clear error for a type tilec lacks

    def params_as_dict(self):
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}

    def equivalent_function(self):
        """A tilec @T.prim_func computing this GEMM (64x64 tiles): A, B[, Bias], C."""
        return matmul_prim_func(self.M, self.N, self.K, self.trans_A, self.trans_B,
                                self.in_dtype, self.out_dtype, self.accum_dtype, self.with_bias)

    def get_hardware_aware_configs(self, arch=None, topk=10):
        """The `topk` best hints for `arch` (default: the template's), best first."""
        arch = arch if arch is not None else self.arch
        family = _family(arch)
        scored = [(self._cost(arch, family, c), c) for c in self._candidates(arch, family)]
        scored.sort(key=lambda item: (item[0], -item[1]["stages"],
                                      -item[1]["block"][0] * item[1]["block"][1]))
        return [self._hint(arch, candidate) for _, candidate in scored[:topk]]

    # --- candidates and their cost -------------------------------------------------------

    def _candidates(self, arch, family):
        in_bytes = DataType(self.in_dtype).bits / 8
        acc_bytes = DataType(self.accum_dtype).bits / 8
        out_bytes = DataType(self.out_dtype).bits / 8
        smem_budget = _SMEM_PER_BLOCK.get(getattr(arch, "sm_version", None), arch.max_smem_usage)
        warp_size = getattr(arch, "warp_size", 32)
        rows = (64, 128, 256) if family == "hopper" else (32, 64, 128, 256)
        row_bytes = (128,) if family == "hopper" else (64, 128)
        for block_M in rows:
            if block_M > max(64, _ceil_pow2(self.M)):
                continue
            for block_N in (64, 128, 256):
                if block_N > max(64, _ceil_pow2(self.N)):
                    continue
                for warp_rows, warp_cols in _warp_splits(family, block_M, block_N):
                    threads = warp_rows * warp_cols * warp_size
                    if block_M * block_N * acc_bytes / 4 / threads > _ACCUMULATOR_REGISTERS:
                        continue
                    for bytes_per_row in row_bytes:
                        block_K = int(bytes_per_row // in_bytes)
                        stage_bytes = (block_M + block_N) * block_K * in_bytes
                        epilogue_bytes = block_M * block_N * out_bytes
                        fitting = [s for s in (4, 3, 2, 1)
                                   if s * stage_bytes + epilogue_bytes <= smem_budget]
                        if not fitting:
                            continue
                        yield {"block": [block_M, block_N], "warp": [block_M // warp_rows,
                                                                     block_N // warp_cols],
                               "block_K": block_K, "stages": fitting[0], "threads": threads,
                               "smem": fitting[0] * stage_bytes + epilogue_bytes}

    def _cost(self, arch, family, candidate):
        block_M, block_N = candidate["block"]
        in_bytes = DataType(self.in_dtype).bits / 8
        tiles = math.ceil(self.M / block_M) * math.ceil(self.N / block_N)
        smem_per_sm = _SMEM_PER_SM.get(getattr(arch, "sm_version", None), arch.max_smem_usage)
        resident = max(1, min(smem_per_sm // candidate["smem"], 2048 // candidate["threads"], 4))
        slots = arch.compute_max_core * resident
        waves = math.ceil(tiles / slots)
        tile_time = self.K * max(2 * block_M * block_N,
                                 _BALANCE[family] * (block_M + block_N) * in_bytes)
        hiding = 1 - 0.5 / (candidate["stages"] * resident)
        return waves * resident * tile_time / hiding

    def _hint(self, arch, candidate):
        hint = Hint()
        hint.arch = arch
        hint.use_tc = True
        hint.block = list(candidate["block"])
        hint.warp = list(candidate["warp"])
        hint.rstep = [candidate["block_K"]]
        hint.pipeline_stage = candidate["stages"]
        grid_N = math.ceil(self.N / candidate["block"][1])
        grid = math.ceil(self.M / candidate["block"][0]) * grid_N
        # Panels pay off once the tiles running at once span more than one panel's width.
        if grid > arch.compute_max_core and grid_N > _RASTER_PANEL:
            hint.rasterization_plan = Rasterization2DColumn(_RASTER_PANEL)
        else:
            hint.rasterization_plan = NoRasterization()
        return hint


def _family(arch):
    platform = getattr(arch, "platform", None)
    if platform == "CDNA":
        return "cdna"
    if platform != "CUDA":
        raise ValueError(f"MatmulTemplate recommends tensor-core tiles for CUDA and CDNA devices, "
                         f"not {arch!r}")
    return "hopper" if arch.sm_version >= 90 else "ampere"


def _warp_splits(family, block_M, block_N):
    """(warps along M, warps along N) of a block: on Hopper whole warpgroups of 4 warps
    stacked along M, each 64 rows or more; else 2x2, 2x4 or 4x2 warps of at least 32x32."""
    if family == "hopper":
        return [(4 * groups, 1) for groups in (1, 2) if block_M // (4 * groups) >= 16]
    splits = [(2, 2), (2, 4), (4, 2)]
    return [(r, c) for r, c in splits if block_M // r >= 16 and block_N // c >= 32]


def _ceil_pow2(value):
    return 1 << max(0, (value - 1).bit_length())


__all__ = ["MatmulTemplate"]

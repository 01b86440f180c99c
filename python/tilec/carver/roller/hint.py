"""Hint: one tile configuration a carver template recommends (tilelang.carver.roller.hint)."""

from .rasterization import NoRasterization


class Hint:
    """block: the output tile of a block ([block_M, block_N] for a GEMM); warp: the output tile
    of one warp (the block has (block_M // warp_M) * (block_N // warp_N) warps); rstep: the
    reduction tile ([block_K]); pipeline_stage: the software pipeline's stages (1: none);
    rasterization_plan: the block order (rasterization.py); use_tc: tensor cores; arch: the
    device description it was made for."""

    def __init__(self):
        self.arch = None
        self.use_tc = False
        self.block = []
        self.warp = []
        self.rstep = []
        self.pipeline_stage = 1
        self.rasterization_plan = NoRasterization()

    @property
    def threads(self):
        """The block's threads: its warps times the warp size."""
        warps = 1
        for whole, part in zip(self.block, self.warp):
            warps *= whole // part
        return warps * getattr(self.arch, "warp_size", 32)

    def to_dict(self):
        result = {"block": self.block, "warp": self.warp, "rstep": self.rstep}
        if self.use_tc:
            result["use_tc"] = True
        if self.pipeline_stage != 1:
            result["pipeline_stage"] = self.pipeline_stage
        if not isinstance(self.rasterization_plan, NoRasterization):
            result["rasterization_plan"] = self.rasterization_plan
        return result

    def __repr__(self):
        return str(self.to_dict())


__all__ = ["Hint"]

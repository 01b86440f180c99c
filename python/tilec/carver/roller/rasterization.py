"""The order in which a grid's blocks take their output tiles (tilelang.carver.roller.
rasterization): row by row, or in panels of `panel_width` tiles so that blocks running at once
share their operands in L2; a kernel applies a panel plan with T.use_swizzle(panel_width)."""


class Rasterization:
    """A plan; `panel_width` is the panel's width in tiles (None for no panels)."""

    panel_width = None


class NoRasterization(Rasterization):
    """Blocks take tiles in launch order."""

    def __repr__(self):
        return "<NoRasterization>"


class Rasterization2DRow(Rasterization):
    """Panels of `panel_width` tile rows, walked row by row."""

    def __init__(self, panel_width=4):
        self.panel_width = panel_width

    def __repr__(self):
        return f"<Rasterization2DRow({self.panel_width})>"


class Rasterization2DColumn(Rasterization):
    """Panels of `panel_width` tile columns, walked column by column."""

    def __init__(self, panel_width=4):
        self.panel_width = panel_width

    def __repr__(self):
        return f"<Rasterization2DColumn({self.panel_width})>"


__all__ = ["NoRasterization", "Rasterization", "Rasterization2DColumn", "Rasterization2DRow"]

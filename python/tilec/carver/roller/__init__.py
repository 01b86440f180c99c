"""The carver's tile recommendations (tilelang.carver.roller): Hint, the configuration a
template recommends, and the rasterization plans a hint carries."""

from .hint import Hint
from .rasterization import NoRasterization, Rasterization, Rasterization2DColumn, Rasterization2DRow

__all__ = ["Hint", "NoRasterization", "Rasterization", "Rasterization2DColumn",
           "Rasterization2DRow"]

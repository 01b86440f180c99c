"""What TileLang programs use of tilelang.contrib: nvcc's compute-version queries."""

from . import nvcc

__all__ = ["nvcc"]

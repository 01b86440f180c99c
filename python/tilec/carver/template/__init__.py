"""Carver templates (tilelang.carver.template): a computation described by its shape and
dtypes that recommends tile configurations (roller Hints) for a device."""

from .base import BaseTemplate
from .matmul import MatmulTemplate

__all__ = ["BaseTemplate", "MatmulTemplate"]

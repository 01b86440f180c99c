"""Helpers TileLang programs import from tilelang.utils."""

from .tensor import TensorSupplyType, get_tensor_supply, torch_assert_close

__all__ = ["TensorSupplyType", "get_tensor_supply", "torch_assert_close"]

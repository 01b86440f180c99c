"""tilec.DataType: an element type with its width, where TileLang programs use TVM's DataType
(`DataType(dtype).bits` to size vector loads)."""

from . import _core
from .language import dtype


class DataType:
    """DataType("float16"), DataType(T.bfloat16), DataType(torch.float8_e4m3fn), or a vector
    type "float16x4": `bits` (of one lane; bool is 8, as tilec stores it), `lanes`, `itemsize`
    (bytes of all lanes), `with_lanes(n)`; str() is the type's name, and it equals that name
    and the T dtype of it."""

    __slots__ = ("_element", "lanes")

    def __init__(self, value):
        if isinstance(value, DataType):
            self._element, self.lanes = value._element, value.lanes
            return
        lanes = 1
        if isinstance(value, str):
            element, separator, count = value.rpartition("x")
            if separator and element and count.isdigit() and _core.dtype_name(element) is not None:
                value, lanes = element, int(count)
        self._element = dtype(value)
        if lanes < 1:
            raise ValueError(f"DataType {value!r}: a vector type has at least one lane")
        self.lanes = lanes

    @property
    def bits(self):
        return _core.dtype_bits(self._element)

    @property
    def itemsize(self):
        return self.bits * self.lanes // 8

    @property
    def element(self):
        """The element type of one lane, as a T dtype."""
        return self._element

    def with_lanes(self, lanes):
        return DataType(f"{self._element}x{lanes}" if lanes != 1 else self._element)

    def __str__(self):
        return self._element if self.lanes == 1 else f"{self._element}x{self.lanes}"

    def __repr__(self):
        return f"DataType({str(self)!r})"

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = DataType(other)
            except (TypeError, ValueError):
                return False
        if not isinstance(other, DataType):
            return NotImplemented
        return (self._element, self.lanes) == (other._element, other.lanes)

    def __hash__(self):
        return hash(str(self))

    def _tilec_value(self):
        if self.lanes != 1:
            return ("opaque", f"DataType {self} (a vector type)")
        return ("dtype", str(self._element))


__all__ = ["DataType"]

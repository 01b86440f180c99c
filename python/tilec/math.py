"""Integer helpers TileLang programs' factories use (tilelang.math; also tilec.cdiv and
tilec.next_power_of_2)."""


def next_power_of_2(x):
    """The least power of 2 at or above `x` (an int of at least 1): 1, 2, 4, ..."""
    return 1 << (x - 1).bit_length()


def cdiv(a, b):
    """a / b rounded up, for ints (and symbolic dims, as an expression)."""
    return (a + b - 1) // b


__all__ = ["cdiv", "next_power_of_2"]

"""TVM's tirx (tir) as TileLang kernels use it: the expression helpers const, Select, Cast,
reinterpret, Min and Max, which the core evaluates inside kernels (docs/language.md), and
PrimExpr, the type of the expressions they make, for annotations (kernel expressions exist in
the core only: no Python value is one)."""


class PrimExpr:
    """The type of a kernel expression, as written in annotations (`val: tirx.PrimExpr`)."""


__all__ = ["PrimExpr"]

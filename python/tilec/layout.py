"""Shared-memory layouts, as kernels name them: `tilec.layout.make_swizzled_layout(buf)`
(TileLang's `tilelang.layout.make_swizzled_layout`) inside `T.annotate_layout({...})`.

Python never runs a kernel body: the core reads these calls from the kernel's source
(docs/language.md, "Shared-memory layouts"). This module is what `import tilec.layout`
and `from tilec import layout` give a kernel to name.
"""


class _KernelOnly:
    """A layout function kernels name through this module (`layout.make_swizzled_layout`)."""

    def __init__(self, name):
        self.name = name

    def __call__(self, *args, **kwargs):
        raise TypeError(f"tilec.layout.{self.name} is used inside a kernel, in "
                        f"T.annotate_layout({{buf: tilec.layout.{self.name}(buf)}})")

    def _tilec_value(self):
        # A kernel reads the call from its source; a bare imported name has no value there.
        return ("opaque", f"tilec.layout.{self.name} (write tilec.layout.{self.name}(buf) "
                          f"or T.{self.name}(buf))")


make_swizzled_layout = _KernelOnly("make_swizzled_layout")

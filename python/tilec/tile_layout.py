"""Where a tile's elements live, as arrays: a fragment's threads and registers, a shared tile's
offsets and banks. `Kernel.layouts()` gives those of a compiled GPU kernel (as layout
inference left them); `standard_layout(...)` the compiler's own layouts by name.
`tilec.plot_layout` draws either."""

import numpy as np

from . import _core


class TileLayout:
    """One tile's layout. Arrays are of the tile's shape:

    fragments (scope "fragment"): `thread`, the lowest thread holding each element; `slot`, its
    register slot there; `holders`, how many threads hold it (replicas). `threads` and `slots`
    are the threads it spans and the slots a thread.

    shared tiles (scope "shared"): `offset`, each element's offset from the tile's start in
    elements; `bank`, the 4-byte shared-memory bank (of 32) its first byte is in."""

    def __init__(self, core_layout):
        self.name = core_layout.name
        self.scope = core_layout.scope
        self.dtype = core_layout.dtype
        self.shape = tuple(core_layout.shape)
        self.description = core_layout.description
        self.threads, self.slots = core_layout.threads, core_layout.slots
        if self.scope == "fragment":
            self.thread, self.slot, self.holders = (np.array(values, np.int64).reshape(self.shape) for values in
                                                    (core_layout.thread, core_layout.slot, core_layout.holders))
        else:
            self.offset = np.array(core_layout.offset, np.int64).reshape(self.shape)
            self.bank = self.offset * _element_bytes(self.dtype) // 4 % 32

    def __repr__(self):
        return f"<tilec.TileLayout {self.name} {self.scope} {self.dtype}{list(self.shape)}: {self.description}>"


def _element_bytes(dtype_name):
    return _core.dtype_bits(dtype_name) // 8


def standard_layout(kind, shape, dtype="float32", *args):
    """A layout the compiler gives tiles, by kind:

    "mma_accumulator", "wgmma_accumulator", "mfma_accumulator": a gemm accumulator of shape
    [m, n] over args (warps, warpgroups or waves along m, along n), e.g.
    standard_layout("wgmma_accumulator", (64, 64), "float32", 1, 1);
    "default_fragment": a fragment nobody constrains, args (threads, vector elements a thread);
    "mma_swizzle", "row_major", "panels" (args: panel bytes): a shared tile of `dtype`."""
    return TileLayout(_core.standard_layout(kind, [int(d) for d in shape], str(dtype), [int(a) for a in args]))

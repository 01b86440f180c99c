"""tilec.plot_layout: a tile's layout as a picture (matplotlib, an optional dependency).

A fragment is drawn as its tile, each element coloured by the thread that holds it and
labelled T<thread>/R<register slot>; a shared tile each element coloured by its bank and
labelled with its offset, so that swizzles and bank conflicts show at a glance. Tiles of more
than two dims are drawn with their leading dims folded into the rows."""

import os

import numpy as np

from .tile_layout import TileLayout

# Past this many cells the labels would be too small to read (and slow to draw): colours only.
_MAX_LABELLED_CELLS = 1024


def plot_layout(layout, save_directory="./tmp", name=None, colormap=None, verbose=False, formats="png"):
    """Draws `layout` (a tilec.TileLayout: Kernel.layouts()'s or standard_layout's) into
    `save_directory`/`name`.<format> for each of `formats` ("png", "pdf", "svg"; a string or a
    list); `name` defaults to the layout's. Returns the paths written. verbose prints them."""
    if not isinstance(layout, TileLayout):
        raise TypeError(f"plot_layout draws a tilec.TileLayout (kernel.layouts(), tilec.standard_layout(...)), "
                        f"not {type(layout).__qualname__}")
    formats = [formats] if isinstance(formats, str) else list(formats)
    for fmt in formats:
        if fmt not in ("png", "pdf", "svg"):
            raise ValueError(f"formats are 'png', 'pdf' or 'svg', not {fmt!r}")
    try:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg", force=False)
        from matplotlib import pyplot  # noqa: PLC0415
    except ImportError:
        raise ImportError("tilec.plot_layout needs matplotlib: pip install matplotlib (or tilec[plot])") from None

    fragment = layout.scope == "fragment"
    values = layout.thread if fragment else layout.bank
    rows, cols = _grid(layout.shape)
    values = values.reshape(rows, cols)
    labelled = rows * cols <= _MAX_LABELLED_CELLS
    cell = 0.5 if labelled else max(0.05, 16 / max(rows, cols))
    # Margins in inches around a plot of exactly the cells' size: no space left to waste.
    left, right, bottom, top = 0.8, 0.3, 0.6, 0.8
    width, height = max(cols * cell, 3.0) + left + right, rows * cell + bottom + top
    figure, axes = pyplot.subplots(figsize=(width, height))
    figure.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height, top=1 - top / height)
    count = layout.threads if fragment else 32
    colours = pyplot.get_cmap(colormap or ("tab20" if fragment else "twilight"), max(count, 2))
    axes.imshow(values % max(count, 1), cmap=colours, vmin=0, vmax=max(count - 1, 1), interpolation="nearest",
                aspect="equal")
    if labelled:
        labels = _labels(layout, rows, cols)
        shades = colours((values % max(count, 1)) / max(count - 1, 1))
        for r in range(rows):
            for c in range(cols):
                red, green, blue, _ = shades[r, c]
                dark = 0.299 * red + 0.587 * green + 0.114 * blue < 0.5
                axes.text(c, r, labels[r][c], ha="center", va="center", fontsize=5.5,
                          color="white" if dark else "black")
    axes.set_xlabel(f"dim {len(layout.shape) - 1}")
    axes.set_ylabel(" x ".join(f"dim {d}" for d in range(len(layout.shape) - 1)) or "")
    kind = (f"{layout.threads} threads x {layout.slots} registers; colour: thread" if fragment
            else "colour: 4-byte bank of 32; label: offset")
    axes.set_title(f"{layout.name}: {layout.scope} {layout.dtype}{list(layout.shape)}\n{kind}", fontsize=9)
    os.makedirs(save_directory, exist_ok=True)
    paths = []
    for fmt in formats:
        path = os.path.join(save_directory, f"{name or layout.name}.{fmt}")
        figure.savefig(path, dpi=150)
        paths.append(path)
        if verbose:
            print(f"tilec.plot_layout: wrote {path}")
    pyplot.close(figure)
    return paths


def _grid(shape):
    """(rows, cols) of the picture: the last dim across, the others folded down."""
    if not shape:
        return 1, 1
    return int(np.prod(shape[:-1], dtype=np.int64)), int(shape[-1])


def _labels(layout, rows, cols):
    if layout.scope == "fragment":
        thread, slot = layout.thread.reshape(rows, cols), layout.slot.reshape(rows, cols)
        return [[f"T{thread[r, c]}\nR{slot[r, c]}" for c in range(cols)] for r in range(rows)]
    offset = layout.offset.reshape(rows, cols)
    return [[str(offset[r, c]) for c in range(cols)] for r in range(rows)]

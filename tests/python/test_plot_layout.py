"""Tile layouts as arrays (tilec.standard_layout, Kernel.layouts()) and as pictures
(tilec.plot_layout): the arrays say which thread and register hold each element or where a
shared element lives, and each picture is an image of its own layout."""

import numpy as np
import pytest

import tilec
import tilec.language as T

matplotlib = pytest.importorskip("matplotlib", reason="tilec.plot_layout draws with matplotlib")


def test_the_mma_accumulator_holds_rows_on_lane_groups_and_column_pairs_on_lanes():
    layout = tilec.standard_layout("mma_accumulator", (16, 8), "float32", 1, 1)
    rows, cols = np.indices((16, 8))
    assert (layout.thread == 4 * (rows % 8) + cols // 2).all()
    assert (layout.slot == cols % 2 + 2 * (rows // 8)).all()
    assert (layout.holders == 1).all()
    assert (layout.threads, layout.slots) == (32, 4)


def test_a_swizzled_tile_spreads_a_column_of_16_byte_chunks_over_the_banks():
    layout = tilec.standard_layout("mma_swizzle", (8, 64), "float16")
    assert sorted(layout.offset.reshape(-1)) == list(range(8 * 64))
    # The first chunk of each of the 8 rows lies in its own 16 bytes of the 128-byte line.
    assert sorted(set(layout.bank[:, 0] // 4)) == list(range(8))
    row_major = tilec.standard_layout("row_major", (8, 64), "float16")
    assert set(row_major.bank[:, 0]) == {0}


def test_standard_layout_names_what_is_wrong():
    with pytest.raises(ValueError, match="unknown layout 'mma'"):
        tilec.standard_layout("mma", (16, 8))
    with pytest.raises(ValueError, match="is no tilec element type"):
        tilec.standard_layout("row_major", (4, 4), "float13")


@tilec.jit(target="cuda", arch="sm_90a")
def gemm(M=128, N=128, K=64):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_shared = T.alloc_shared((M, K), "float16")
            B_shared = T.alloc_shared((K, N), "float16")
            C_local = T.alloc_fragment((M, N), "float32")
            T.copy(A, A_shared)
            T.copy(B, B_shared)
            T.clear(C_local)
            T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C)

    return main


def test_a_kernel_lists_its_tiles_layouts():
    layouts = {layout.name: layout for layout in gemm().layouts()}
    accumulator = layouts["C_local"]
    assert (accumulator.scope, accumulator.dtype, accumulator.shape) == ("fragment", "float32", (128, 128))
    # wgmma over one warpgroup: each element once, on one of its 128 threads.
    assert accumulator.threads == 128 and (accumulator.holders == 1).all()
    assert accumulator.threads * accumulator.slots == 128 * 128
    assert layouts["A_shared"].scope == "shared"
    assert sorted(layouts["A_shared"].offset.reshape(-1)) == list(range(128 * 64))


def picture(layout, tmp_path, name):
    (path,) = tilec.plot_layout(layout, str(tmp_path), name=name)
    return matplotlib.pyplot.imread(path)


def test_each_layout_draws_a_picture_of_its_own(tmp_path):
    mma = tilec.standard_layout("mma_accumulator", (16, 16), "float32", 1, 1)
    wgmma = tilec.standard_layout("wgmma_accumulator", (64, 8), "float32", 1, 1)
    swizzled = tilec.standard_layout("mma_swizzle", (8, 64), "float16")
    panels = tilec.standard_layout("panels", (8, 64), "float16", 64)
    images = [picture(layout, tmp_path, f"layout{i}") for i, layout in enumerate((mma, wgmma, swizzled, panels))]
    for image in images:
        height, width = image.shape[:2]
        assert height > 300 and width > 300
        pixels = np.ascontiguousarray((image[..., :3] * 255).astype(np.uint8))
        colours = np.unique(pixels[..., 0].astype(np.uint32) << 16 | pixels[..., 1].astype(np.uint32) << 8
                            | pixels[..., 2])
        assert len(colours) > 20  # cells of many colours
    assert images[0].shape != images[1].shape or not np.array_equal(images[0], images[1])
    assert images[2].shape == images[3].shape and not np.array_equal(images[2], images[3])
    assert np.array_equal(images[0], picture(mma, tmp_path, "again"))  # the same layout, the same pixels


def test_plot_layout_writes_each_format_asked_for_and_refuses_others(tmp_path):
    layout = tilec.standard_layout("row_major", (4, 8), "float32")
    paths = tilec.plot_layout(layout, str(tmp_path), formats=["png", "svg"])
    assert [p[-3:] for p in paths] == ["png", "svg"]
    assert all((tmp_path / p.split("/")[-1]).stat().st_size > 1000 for p in paths)
    with pytest.raises(ValueError, match="formats are 'png', 'pdf' or 'svg', not 'jpg'"):
        tilec.plot_layout(layout, str(tmp_path), formats="jpg")
    with pytest.raises(TypeError, match="plot_layout draws a tilec.TileLayout"):
        tilec.plot_layout("C_local", str(tmp_path))

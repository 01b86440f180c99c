"""T.annotate_layout: shared tiles in a user's layout (T.Layout) or TileLang's
make_swizzled_layout, on the backend under test (the CPU honours them too); the errors for
layouts that are not bijections and for what is not a layout; and kernels with annotated
layouts built for CUDA by NVRTC, where a user layout is honoured where it is the one an
instruction needs and the instruction falls back, with a DEBUG log line, where it is not."""

import numpy as np
import pytest

import tilec
import tilec as tilelang
import tilec.language as T

from helpers import assert_close, check_diagnostic, jit, poison, rand, rng, skip_without_nvrtc  # noqa: F401  (rng is a fixture)

HERE = __file__

LAYOUTS = ["xor_columns", "coordinates", "swizzled"]


def reversed_rows_func(n, layout):
    @T.prim_func
    def main(A: T.Tensor((n, 32), "float32"), B: T.Tensor((n, 32), "float32")):
        with T.Kernel(n // 16, threads=128) as bx:
            A_s = T.alloc_shared((16, 32), "float32")
            if layout == "xor_columns":  # column-major, rows XOR-permuted: no two neighbours adjacent
                T.annotate_layout({A_s: T.Layout((16, 32), lambda i, j: j * 16 + (i ^ (j % 16)))})
            elif layout == "coordinates":  # runs of 4 kept whole, moved by the row
                T.annotate_layout({A_s: T.Layout((16, 32), lambda i, j: (i, j ^ (i % 8) * 4))})
            else:
                T.annotate_layout({A_s: tilelang.layout.make_swizzled_layout(A_s)})
            T.copy(A[bx * 16, 0], A_s)
            for i, j in T.Parallel(16, 32):
                B[bx * 16 + i, j] = A_s[i, 31 - j] * 2.0

    return main


reversed_rows = jit(reversed_rows_func)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_shared_tile_in_an_annotated_layout_reads_back_what_was_written(layout, rng):
    a = rand((48, 32), "float32", rng)
    b = poison((48, 32), "float32")
    reversed_rows(48, layout)(a, b)
    assert_close(b, 2.0 * a[:, ::-1], "float32", what=layout)


@pytest.mark.parametrize("layout, comment", [
    ("xor_columns", "# layout (i, j) -> j * 16 + (i ^ j % 16)"),
    ("coordinates", "# layout (i, j) -> i * 32 + (j ^ i % 8 * 4)"),
    ("swizzled", "# 128-byte panels"),
])
def test_the_ir_shows_the_layout(layout, comment):
    ir = reversed_rows(48, layout).get_ir()
    assert 'A_s = T.alloc_shared((16, 32), "float32")  ' + comment in ir, ir


@jit
def annotated(error):
    @T.prim_func
    def main(A: T.Tensor((8, 8), "float32")):
        with T.Kernel(2, threads=32) as bx:
            A_s = T.alloc_shared((8, 8), "float32")
            A_f = T.alloc_fragment((8, 8), "float32")
            if error == "bijection":
                T.annotate_layout({A_s: T.Layout((8, 8), lambda i, j: i + j)})  # ERR:bijection
            elif error == "outside":
                T.annotate_layout({A_s: T.Layout((8, 8), lambda i, j: i * 9 + j)})  # ERR:outside
            elif error == "runtime":
                T.annotate_layout({A_s: T.Layout((8, 8), lambda i, j: i * 8 + (j ^ bx))})  # ERR:runtime
            elif error == "fragment":
                T.annotate_layout({A_f: T.Layout((8, 8), lambda i, j: i * 8 + j)})  # ERR:fragment
            elif error == "shape":
                T.annotate_layout({A_s: T.Layout((4, 16), lambda i, j: i * 16 + j)})  # ERR:shape
            else:
                T.annotate_layout({A_s: 3})  # ERR:value
            T.copy(A, A_s)
            T.copy(A_s, A_f)

    return main


@pytest.mark.parametrize("error, words", [
    ("bijection", ["not a bijection", "(0, 1) and (1, 0) both have offset 1"]),
    ("outside", ["not a bijection", "is 64, outside the tile's 64 elements"]),
    ("runtime", ["not a constant", "function of its indices alone"]),
    ("fragment", ["keys are shared buffers", "fragment buffer 'A_f'"]),
    ("shape", ["for a (4, 16) tile", "'A_s' is (8, 8)"]),
    ("value", ["values are layouts", "not int"]),
])
def test_what_is_not_a_layout_of_the_buffer_is_a_located_error(error, words):
    with pytest.raises(tilec.CompileError) as info:
        annotated(error)
    check_diagnostic(str(info.value), HERE, "ERR:" + error, *words)


def test_the_error_points_at_the_lambda():
    with pytest.raises(tilec.CompileError) as info:
        annotated("bijection")
    text = str(info.value)
    source_line = next(line for line in open(HERE, encoding="utf-8") if "ERR:bijection" in line)
    caret_line = text.splitlines()[2]
    assert caret_line.index("^") == source_line.index("lambda") + 4, text  # the quoted line is indented 4


# --- CUDA source through NVRTC (no GPU needed) ------------------------------------------

def gemm(layout, trans_b=True):
    """A 64 x 64 x 64 fp16 gemm of one block whose B tile has the given annotation."""

    @T.prim_func
    def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 64), "float16")
            B_s = T.alloc_shared((64, 64), "float16")
            C_l = T.alloc_fragment((64, 64), "float32")
            if layout == "panels":  # the 128-byte panels TMA writes and wgmma reads, written out
                T.annotate_layout({B_s: T.Layout((64, 64), lambda i, j: i * 64 + ((j // 8) ^ (i % 8)) * 8 + j % 8)})
            elif layout == "xor":
                T.annotate_layout({B_s: T.Layout((64, 64), lambda i, j: i * 64 + (j ^ (i % 4)))})
            else:
                T.annotate_layout({B_s: tilelang.layout.make_swizzled_layout(B_s)})
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.gemm(A_s, B_s, C_l, transpose_B=trans_b, clear_accum=True)
            T.copy(C_l, C)

    return main


def nvrtc_source(func, arch, capfd=None):
    if capfd:
        capfd.readouterr()
        tilec.set_log_level("DEBUG")
    try:
        with skip_without_nvrtc():
            return tilec.compile(func, target="cuda", arch=arch).get_kernel_source()
    finally:
        if capfd:
            tilec.set_log_level("WARNING")


@pytest.mark.parametrize("layout", ["panels", "swizzled"])
def test_a_layout_that_is_the_panels_is_honoured_by_wgmma_and_the_mma_swizzle_replaces_a_swizzled_one(layout):
    assert "wgmma_gemm_ss<" in nvrtc_source(gemm(layout), "sm_90a")
    # On sm_80 make_swizzled_layout yields to the mma swizzle; a 128-byte-row panel layout is it.
    src = nvrtc_source(gemm(layout), "sm_80")
    assert "gemm_ss<64, 64, 64" in src and "swizzled_offset<64, 2>" in src, src


def test_a_user_layout_no_instruction_reads_runs_on_cuda_cores_and_says_why(capfd):
    for arch, instruction in [("sm_90a", "wgmma"), ("sm_80", "mma.sync")]:
        src = nvrtc_source(gemm("xor"), arch, capfd)
        log = capfd.readouterr().err
        assert "gemm_ss<" not in src, src
        assert "B_s[" in src and " ^ " in src, src  # its accesses through the layout's expression
        assert f"T.gemm runs on CUDA cores, not {instruction}: B ('B_s') has the layout T.annotate_layout gave it" \
            in log, log


def test_vector_copies_keep_to_the_runs_a_user_layout_keeps_whole():
    # Runs of 4 floats stay whole: 16-byte cp.async; the XOR of columns breaks every run.
    assert "cp_async_16(" in nvrtc_source(reversed_rows_func(48, "coordinates"), "sm_80")
    assert "cp_async_16(" not in nvrtc_source(reversed_rows_func(48, "xor_columns"), "sm_80")

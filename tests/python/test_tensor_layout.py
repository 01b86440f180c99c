"""T.annotate_layout on a kernel's tensor parameter (TileLang's flash-attention backward): the
tensor's elements are stored at the layout's offsets, and every access of it goes through
them. Checked on the backend under test against NumPy by reading the raw memory a kernel
writes through the layout (stores and atomic adds) and by reading back memory laid out by
NumPy; the errors (a strided argument, a symbolic dim, a block that forgets the annotation,
two layouts of one tensor); and the CUDA source through NVRTC, which indexes through the
layout and moves such a tensor without TMA, cp.async or vector accesses."""

import numpy as np
import pytest

import tilec
import tilec.language as T

from helpers import assert_close, check_diagnostic, jit, poison, rand, rng, skip_without_nvrtc  # noqa: F401  (rng is a fixture)

HERE = __file__


def dq_layout(dQ):
    # TileLang's make_dq_layout (example_mha_bwd_bhsd.py): 8 x 8 blocks for atomic adds.
    return T.Layout(dQ.shape, lambda b, h, l, d: [b, h, l // 8, d // 8, (d % 2), 4 * (l % 8) + (d % 8) // 2])


def dq_offsets(shape):
    """The offset of every element of `shape` under dq_layout, as NumPy computes it."""
    B, H, L, D = shape
    b, h, l, d = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
    coordinates = [b, h, l // 8, d // 8, d % 2, 4 * (l % 8) + (d % 8) // 2]
    extents = [B, H, L // 8, D // 8, 2, 32]
    offset = np.zeros(shape, dtype=np.int64)
    for c, e in zip(coordinates, extents):
        offset = offset * e + c
    return offset


def laid_out(logical, offsets):
    """The memory of a tensor of values `logical` stored at `offsets`, in its own shape."""
    raw = np.empty(logical.size, dtype=logical.dtype)
    raw[offsets.reshape(-1)] = logical.reshape(-1)
    return raw.reshape(logical.shape)


def read_logical(raw, offsets):
    return raw.reshape(-1)[offsets]


SHAPE = (2, 3, 32, 16)


def accumulate_func(shape, blk=16):
    """dQ += 2 * A through the layout by atomic adds (element form), then dQ += A (tile form)."""
    B, H, L, D = shape

    @T.prim_func
    def main(A: T.Tensor(shape, "float32"), dQ: T.Tensor(shape, "float32")):
        with T.Kernel(L // blk, H, B, threads=128) as (bx, by, bz):
            T.annotate_layout({dQ: dq_layout(dQ)})
            a = T.alloc_fragment((blk, D), "float32")
            T.copy(A[bz, by, bx * blk:(bx + 1) * blk, :], a)
            for i, j in T.Parallel(blk, D):
                T.atomic_add(dQ[bz, by, bx * blk + i, j], a[i, j] * 2.0)
            T.atomic_add(dQ[bz, by, bx * blk:(bx + 1) * blk, :], a)

    return main


accumulate = jit(accumulate_func)


def store_func(shape, blk=16):
    """dQ = A + 1 through the layout, element by element and by T.copy of a shared tile."""
    B, H, L, D = shape

    @T.prim_func
    def main(A: T.Tensor(shape, "float32"), dQ: T.Tensor(shape, "float32")):
        with T.Kernel(L // blk, H, B, threads=128) as (bx, by, bz):
            s = T.alloc_shared((blk, D), "float32")
            T.copy(A[bz, by, bx * blk:(bx + 1) * blk, :], s)
            T.annotate_layout({dQ: dq_layout(dQ)})  # after a use of dQ's neighbours: the whole block
            for i, j in T.Parallel(blk, D):
                s[i, j] = s[i, j] + 1.0
            if bx % 2 == 0:
                T.copy(s, dQ[bz, by, bx * blk:(bx + 1) * blk, :])
            else:
                for i, j in T.Parallel(blk, D):
                    dQ[bz, by, bx * blk + i, j] = s[i, j]

    return main


store = jit(store_func)


def postprocess_func(shape, blk=16):
    """dQ_out = dQ read through the layout (TileLang's flashattn_bwd_postprocess)."""
    B, H, L, D = shape

    @T.prim_func
    def main(dQ: T.Tensor(shape, "float32"), dQ_out: T.Tensor(shape, "float16")):
        with T.Kernel(L // blk, H, B, threads=128) as (bx, by, bz):
            T.annotate_layout({dQ: dq_layout(dQ)})
            T.copy(dQ[bz, by, bx * blk:(bx + 1) * blk, :], dQ_out[bz, by, bx * blk:(bx + 1) * blk, :])

    return main


postprocess = jit(postprocess_func)


@jit
def transposed_readback(L, H, D, blk=8):
    """The varlen example's layout, [h, l, d]: dQ_out = dQ, through a shared tile."""

    @T.prim_func
    def main(dQ: T.Tensor((L, H, D), "float32"), dQ_out: T.Tensor((L, H, D), "float32")):
        with T.Kernel(T.ceildiv(L, blk), H, threads=64) as (bx, by):
            T.annotate_layout({dQ: T.Layout(dQ.shape, lambda l, h, d: [h, l, d])})
            s = T.alloc_shared((blk, D), "float32")
            T.copy(dQ[bx * blk:(bx + 1) * blk, by, :], s)
            T.copy(s, dQ_out[bx * blk:(bx + 1) * blk, by, :])

    return main


def test_atomic_adds_through_a_layout_land_at_its_offsets(rng):
    a = rand(SHAPE, "float32", rng)
    start = rand(SHAPE, "float32", rng)
    offsets = dq_offsets(SHAPE)
    raw = start.copy()
    accumulate(SHAPE)(a, raw)
    assert_close(raw, start + laid_out(3.0 * a, offsets), "float32")
    assert_close(read_logical(raw, offsets), read_logical(start, offsets) + 3.0 * a, "float32")


def test_stores_and_copies_through_a_layout_land_at_its_offsets(rng):
    a = rand(SHAPE, "float32", rng)
    raw = poison(SHAPE, "float32")
    store(SHAPE)(a, raw)
    assert_close(raw, laid_out(a + 1.0, dq_offsets(SHAPE)), "float32")


def test_a_kernel_reads_back_what_the_layout_stored(rng):
    dq = rand(SHAPE, "float32", rng)
    out = poison(SHAPE, "float16")
    postprocess(SHAPE)(laid_out(dq, dq_offsets(SHAPE)), out)
    assert_close(out, dq, "float16")


def test_written_then_read_back_through_the_same_layout(rng):
    a = rand(SHAPE, "float32", rng)
    raw = np.zeros(SHAPE, dtype=np.float32)
    accumulate(SHAPE)(a, raw)
    out = poison(SHAPE, "float16")
    postprocess(SHAPE)(raw, out)
    assert_close(out, 3.0 * a, "float16")


@pytest.mark.parametrize("L", [16, 13])  # 13: the last tile sticks out of the tensor
def test_a_transposing_layout_reads_the_tensor_head_major(L, rng):
    H, D = 3, 8
    dq = rand((L, H, D), "float32", rng)
    out = poison((L, H, D), "float32")
    transposed_readback(L, H, D)(np.ascontiguousarray(dq.transpose(1, 0, 2)).reshape(L, H, D), out)
    assert_close(out, dq, "float32", exact=True)


@jit
def eager_transposed_scale(X, blk: int = 4):
    N, M = T.const("N, M")
    X: T.Tensor((N, M), "float32")
    Y = T.empty((M, N), "float32")
    with T.Kernel(T.ceildiv(N, blk), threads=32) as bx:
        T.annotate_layout({X: T.Layout(X.shape, lambda i, j: [j, i])})  # X arrives column-major
        for i, j in T.Parallel(blk, M):
            if bx * blk + i < N:
                Y[j, bx * blk + i] = X[bx * blk + i, j] * 2.0
    return Y


def test_an_eager_kernel_reads_a_tensor_through_its_layout(rng):
    x = rand((10, 6), "float32", rng)
    column_major = np.ascontiguousarray(x.T).reshape(10, 6)
    assert_close(eager_transposed_scale(column_major), 2.0 * x.T, "float32", exact=True)


def panel_matmul_func(M, N, K):
    """C = A @ B, A stored in 64-column panels ([j // 64, i, j % 64]), loaded by a pipelined copy."""

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(N // 64, M // 64, threads=128) as (bx, by):
            T.annotate_layout({A: T.Layout(A.shape, lambda i, j: [j // 64, i, j % 64])})
            A_s = T.alloc_shared((64, 64), "float16")
            B_s = T.alloc_shared((64, 64), "float16")
            C_f = T.alloc_fragment((64, 64), "float32")
            T.clear(C_f)
            for k in T.Pipelined(K // 64, num_stages=3):
                T.copy(A[by * 64, k * 64], A_s)
                T.copy(B[k * 64, bx * 64], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[by * 64, bx * 64])

    return main


panel_matmul = jit(panel_matmul_func)


def test_a_gemm_reads_its_operand_through_the_tensor_layout(rng):
    M, N, K = 64, 128, 192
    a, b = rand((M, K), "float16", rng), rand((K, N), "float16", rng)
    panels = np.ascontiguousarray(a.reshape(M, K // 64, 64).transpose(1, 0, 2)).reshape(M, K)
    c = poison((M, N), "float32")
    panel_matmul(M, N, K)(panels, b, c)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    assert_close(c, expected, "float32", scale=np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))


def two_blocks_func(L, D):
    """Block 1 writes dQ = A through the layout, block 2 reads it back into B through the same one."""

    @T.prim_func
    def main(A: T.Tensor((1, 1, L, D), "float32"), dQ: T.Tensor((1, 1, L, D), "float32"),
             B: T.Tensor((1, 1, L, D), "float32")):
        with T.Kernel(1, threads=32) as bx:
            T.annotate_layout({dQ: dq_layout(dQ)})
            for i, j in T.Parallel(L, D):
                dQ[0, 0, i, j] = A[0, 0, i, j]
        with T.Kernel(1, threads=32) as bx:
            T.annotate_layout({dQ: dq_layout(dQ)})
            for i, j in T.Parallel(L, D):
                B[0, 0, i, j] = dQ[0, 0, i, j] * 2.0

    return main


two_blocks = jit(two_blocks_func)


def test_two_blocks_annotating_the_same_layout_share_the_tensor(rng):
    shape = (1, 1, 16, 8)
    a = rand(shape, "float32", rng)
    raw, b = poison(shape, "float32"), poison(shape, "float32")
    two_blocks(16, 8)(a, raw, b)
    assert_close(raw, laid_out(a, dq_offsets(shape)), "float32", exact=True)
    assert_close(b, 2.0 * a, "float32", exact=True)


@jit
def through_workspace(L, D):
    """A T.alloc_global scratch tensor in a layout, written by one block and read by the next."""

    @T.prim_func
    def main(A: T.Tensor((L, D), "float32"), B: T.Tensor((L, D), "float32")):
        W = T.alloc_global((L, D), "float32")
        with T.Kernel(1, threads=32) as bx:
            T.annotate_layout({W: T.Layout(W.shape, lambda i, j: [j, i])})
            for i, j in T.Parallel(L, D):
                W[i, j] = A[i, j] + 1.0
        with T.Kernel(1, threads=32) as bx:
            T.annotate_layout({W: T.Layout(W.shape, lambda i, j: [j, i])})
            for i, j in T.Parallel(L, D):
                B[i, j] = W[i, j] * 2.0

    return main


def test_a_workspace_in_a_layout_hands_its_elements_to_the_next_block(rng):
    a = rand((8, 4), "float32", rng)
    b = poison((8, 4), "float32")
    through_workspace(8, 4)(a, b)
    assert_close(b, (a + 1.0) * 2.0, "float32", exact=True)


def test_the_ir_shows_the_tensor_layout():
    ir = postprocess(SHAPE).get_ir()
    assert "layout (b, h, l, d) ->" in ir, ir


def test_a_strided_argument_for_a_laid_out_tensor_is_refused_by_name(rng):
    dq = rand((2, 3, 32, 32), "float32", rng)[:, :, :, ::2]
    with pytest.raises(ValueError, match="argument 'dQ' must have stride .*T.annotate_layout gave it a layout"):
        postprocess(SHAPE)(dq, poison(SHAPE, "float16"))


@jit
def misannotated(error):
    n = T.symbolic("n")

    @T.prim_func
    def main(dQ: T.Tensor((16, 16), "float32"), dS: T.Tensor((n, 16), "float32")):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared((16, 16), "float32")
            if error == "symbolic":
                T.annotate_layout({dS: T.Layout((16, 16), lambda i, j: [j, i])})  # ERR:symbolic
            elif error == "bijection":
                T.annotate_layout({dQ: T.Layout(dQ.shape, lambda i, j: [i // 2, j])})  # ERR:bijection
            elif error == "swizzled":
                T.annotate_layout({dQ: T.make_swizzled_layout(S)})  # ERR:swizzled
            else:
                T.annotate_layout({dQ: T.Layout(dQ.shape, lambda i, j: [j, i])})
            for i, j in T.Parallel(16, 16):
                dQ[i, j] = dQ[i, j] * 2.0
        with T.Kernel(1, threads=32) as bx:  # ERR:other_block
            if error == "another":
                T.annotate_layout({dQ: T.Layout(dQ.shape, lambda i, j: [j // 8, i, j % 8])})  # ERR:another
            for i, j in T.Parallel(16, 16):
                dQ[i, j] = dQ[i, j] + 1.0

    return main


@pytest.mark.parametrize("error, marker, words", [
    ("symbolic", "symbolic", ["tensor 'dS' has the symbolic dim n", "constant shape"]),
    ("bijection", "bijection", ["not a bijection onto its (16, 16) tile", "have the same coordinates"]),
    ("swizzled", "swizzled", ["a tensor's layout is a T.Layout"]),
    ("other_block", "other_block", ["uses tensor 'dQ'", "annotate it here too"]),
    ("another", "another", ["tensor 'dQ' has another layout", "stored one way"]),
])
def test_what_a_tensor_layout_cannot_be_is_a_located_error(error, marker, words):
    with pytest.raises(tilec.CompileError) as info:
        misannotated(error)
    check_diagnostic(str(info.value), HERE, "ERR:" + marker, *words)


# --- CUDA source through NVRTC (no GPU needed) ------------------------------------------

def nvrtc_source(func):
    with skip_without_nvrtc():
        return tilec.compile(func, target="cuda", arch="sm_90a").get_kernel_source()


def test_cuda_indexes_a_laid_out_tensor_through_its_layout_element_by_element():
    for func in (accumulate_func(SHAPE), store_func(SHAPE), postprocess_func(SHAPE), two_blocks_func(16, 8)):
        src = nvrtc_source(func)
        dq_lines = [line for line in src.splitlines() if "dQ[" in line and not line.strip().startswith("//")]
        assert dq_lines, src
        # The layout's arithmetic (l // 8, d % 2, ...) in every access; no row-major strides.
        assert all("% 2" in line or "& 1" in line for line in dq_lines), "\n".join(dq_lines)
        for vector in ("cp_async", "tma_", "load_vector", "store_vector", "copy<"):
            assert not any(vector in line for line in dq_lines), "\n".join(dq_lines)


def test_a_pipelined_copy_of_a_laid_out_tensor_takes_no_tma_or_cp_async():
    src = nvrtc_source(panel_matmul_func(256, 256, 256))
    code = [line.strip() for line in src.splitlines() if not line.strip().startswith("//")]
    a_loads = [line for line in code if " A[" in line]
    assert a_loads and all("cp_async" not in line and "tma" not in line for line in a_loads), "\n".join(a_loads)
    assert any("cp_async_16(" in line and "&B[" in line for line in code), src  # B keeps its cp.async


def test_a_tensor_of_more_than_2_to_the_31_elements_is_laid_out_in_int64():
    L = 2**30  # 3 * 2**30 * 2 elements: compiled only

    @T.prim_func
    def main(dQ: T.Tensor((L, 3, 2), "float32"), out: T.Tensor((L, 3, 2), "float32")):
        with T.Kernel(L // 128, threads=128) as bx:
            T.annotate_layout({dQ: T.Layout(dQ.shape, lambda l, h, d: [h, l, d])})
            for i, h, d in T.Parallel(128, 3, 2):
                out[bx * 128 + i, h, d] = dQ[bx * 128 + i, h, d]

    src = nvrtc_source(main)
    loads = [line for line in src.splitlines() if "dQ[" in line and not line.strip().startswith("//")]
    # dQ[l, h, d] is at (h * 2**30 + l) * 2 + d, computed in 64 bits.
    assert loads and all("* INT64_C(1073741824)" in line for line in loads), "\n".join(loads)

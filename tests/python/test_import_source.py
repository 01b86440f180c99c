"""The program's own CUDA device code, as TileLang's dequantizing GEMMs bring theirs in:
T.import_source adds it to the kernel's source once, T.call_extern calls a function of it with
T.access_ptr addresses. CUDA only: the source NVRTC builds for sm_90a, and the result on a GPU."""

import re

import pytest

import tilec
import tilec.language as T
from tilec import CompileError
from helpers import prim_func_from_text
from test_hopper import emit, hopper_or_skip

SCALE = """
template <typename T1, typename T2>
__device__ void scale_by_index(const T1* in, T2* out, int n) {
  for (int i = 0; i < n; ++i) out[i] = T2(float(in[i]) * float(i + 1));
}
"""


def scaled_rows(rows, per=8):
    @T.prim_func
    def main(X: T.Tensor((rows, per), "float32"), Y: T.Tensor((rows, per), "float32")):
        with T.Kernel(1, threads=rows) as bx:
            tx = T.get_thread_binding()
            x = T.alloc_local((per,), "float32")
            y = T.alloc_local((per,), "float32")
            T.import_source(SCALE)
            T.import_source(SCALE)  # once in the source
            for i in T.serial(per):
                x[i] = X[tx, i]
            T.call_extern("scale_by_index", T.access_ptr(x, "r"), T.access_ptr(y, "w"), per, dtype="float32")
            T.call_extern("handle", "scale_by_index", T.access_ptr(x, "r"), T.access_ptr(y, "w"), 1)  # TVM's order
            for i in T.serial(per):
                Y[tx, i] = y[i]

    return main


def test_the_source_comes_once_and_the_call_by_its_name():
    source = emit(scaled_rows(32), "source")
    assert source.count("__device__ void scale_by_index") == 1
    assert re.search(r"scale_by_index\(\(&x\[0\]\), \(&y\[0\]\), 8\);", source)
    assert re.search(r"scale_by_index\(\(&x\[0\]\), \(&y\[0\]\), 1\);", source)
    assert ".entry" in emit(scaled_rows(32), "ptx")  # NVRTC builds it (the call inlined)


def test_other_targets_refuse_it():
    with pytest.raises(CompileError, match=r"test_import_source\.py:\d+:\d+: error: T.call_extern calls a function "
                                           r"of the program's CUDA source"):
        tilec.compile(scaled_rows(32), target="cpu")


def kernel_with(lines, tmp_path):
    text = ("import tilec.language as T\n@T.prim_func\n"
            "def main(X: T.Tensor((32,), 'float32')):\n"
            "    with T.Kernel(1, threads=32) as bx:\n" + "".join(f"        {line}\n" for line in lines))
    return prim_func_from_text(text, tmp_path)


@pytest.mark.parametrize("lines,message", [
    (["T.import_source(3)"], "T.import_source takes the CUDA source as a string, not"),
    (["T.call_extern(X[0])"], "T.call_extern takes the name of the function to call, as a string"),
    (["T.call_extern('f(x)', 1)"], "T.call_extern: 'f(x)' is not a C++ function name"),
    (["T.call_extern('f', 1, flavor=2)"], "T.call_extern() got an unexpected keyword argument 'flavor'"),
    (["a = T.alloc_local((4,), T.int4)"], "int4"),
])
def test_mistakes_are_errors_at_their_line(lines, message, tmp_path):
    with pytest.raises(CompileError, match=r"kernel.py:\d+:\d+: error: .*" + re.escape(message)):
        emit(kernel_with(lines, tmp_path), "ir")


def test_int4_is_a_name_python_can_hold():
    assert T.int4 == "int4" and repr(T.uint4) == "T.uint4"


def test_tvm_bit_operator_names(tmp_path):
    ir = emit(kernel_with(["X[0] = T.cast(T.shift_left(T.int32(3), 2) | T.bitwise_and(12, T.shift_right(X[1].astype('int32'), 1)), 'float32')"], tmp_path), "ir")
    assert '(T.cast(X[1], "int32") >> 1 & 12 | 12' in ir  # 3 << 2 folded to 12


@pytest.mark.gpu
def test_the_imported_function_runs():
    torch = hopper_or_skip()
    x = torch.randn(32, 8, device="cuda")
    y = torch.full((32, 8), float("nan"), device="cuda")
    tilec.compile(scaled_rows(32))(x, y)
    # the second call (n = 1) rescales y[0] by 1 again: the same.
    expected = x * torch.arange(1, 9, device="cuda", dtype=torch.float32)
    torch.testing.assert_close(y, expected)

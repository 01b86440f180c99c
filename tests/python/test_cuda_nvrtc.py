"""Every kernel compiles for CUDA through NVRTC, for each architecture CI
checks, with no GPU: the kernels of examples/*.py, those of
tests/golden/kernels/*.py, and every kernel the other tests compiled with
helpers.jit (they run first and record them)."""

import concurrent.futures
import os

import pytest

import tilec
import tilec.language as T
from tilec import _core
from tilec.jit import JitFunction, core_pass_configs

from helpers import RECORDED_KERNELS, skip_without_nvrtc
from kernel_corpus import EXAMPLE_CONSTANTS, EXAMPLES, GOLDEN_KERNELS, example_kernel, golden_kernel, import_file

ARCHS = ["sm_80", "sm_90a"]


@pytest.fixture(scope="module", autouse=True)
def nvrtc():
    """Skips the module where NVRTC can't be loaded."""
    @T.prim_func
    def probe(A: T.Tensor((1,), "float32")):
        with T.Kernel(1) as bx:
            A[0] = 1.0

    with skip_without_nvrtc():
        tilec.compile(probe, target="cuda", arch=ARCHS[0])


def compile_for(jitted, arch, constants):
    """`jitted` (a jit function) compiled for CUDA `arch` with `constants` by name."""
    retargeted = tilec.jit(jitted.__wrapped__, out_idx=jitted.out_idx, target="cuda", arch=arch,
                           pass_configs=jitted.pass_configs)
    kernel = retargeted.compile(**constants)
    assert kernel.target == "cuda" and kernel.arch == arch
    return kernel


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("file_name,name", sorted(EXAMPLE_CONSTANTS))
def test_example(file_name, name, arch):
    jitted, constants = example_kernel(file_name, name)
    compile_for(jitted, arch, constants)


def test_every_example_function_is_listed():
    for path in sorted(EXAMPLES.glob("*.py")):
        module = import_file(path)
        for name, value in vars(module).items():
            if isinstance(value, JitFunction) and value.__module__ == module.__name__:
                assert (path.name, name) in EXAMPLE_CONSTANTS, (
                    f"examples/{path.name}: add the constants to compile '{name}' with to "
                    f"EXAMPLE_CONSTANTS")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("path", sorted(GOLDEN_KERNELS.glob("*.py")), ids=lambda p: p.stem)
def test_golden_kernels(path, arch):
    jitted, constants = golden_kernel(path)
    compile_for(jitted, arch, constants)


# Each kernel compiles for contiguous tensors unless told not to; the general variant
# (strided or unaligned tensors, built by the first such call) is checked for one arch, and
# so is the variant with bounds checks (TILEC_BOUNDS_CHECK).
VARIANTS = [(arch, "contiguous") for arch in ARCHS] + [(ARCHS[-1], "general"),
                                                       (ARCHS[-1], "bounds_check")]


@pytest.mark.runs_last
@pytest.mark.parametrize("arch,variant", VARIANTS)
def test_every_kernel_the_tests_compiled(arch, variant):
    if not RECORDED_KERNELS:
        pytest.skip("no kernels recorded: run this file together with the other tests")

    def compile_one(recorded):
        pass_configs = dict(recorded.pass_configs)
        if variant == "general":
            pass_configs["tilec.specialize_contiguous"] = False
        if variant == "bounds_check":
            pass_configs["tilec.bounds_check"] = True
        try:
            _core.compile(recorded.source, recorded.filename, recorded.first_line, recorded.name,
                          recorded.bindings, "cuda", arch, core_pass_configs(pass_configs))
        except Exception as e:  # noqa: BLE001  (every failure is reported below)
            return f"{recorded!r}: {type(e).__name__}: {str(e)[:2000]}"
        return None

    # NVRTC runs with the GIL released: compile on every core.
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        failures = [f for f in pool.map(compile_one, RECORDED_KERNELS.values()) if f]
    assert not failures, (f"{len(failures)} of {len(RECORDED_KERNELS)} kernels don't compile "
                          f"for {arch} ({variant} variant):\n\n" + "\n\n".join(failures[:10]))

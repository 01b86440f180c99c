"""bench/kernel_registers.py: ptxas's report on the attention and DSA kernels tilec builds for
sm_90a, through NVRTC as tilec builds them (no GPU needed). Asynchronous wgmma code must not
make ptxas wait for a wgmma where the program doesn't (warning C7517: the gemm would wait for
itself) nor serialize a kernel's wgmmas (C7514: an accumulator read while its wgmma may run),
and no kernel may spill."""

import importlib.util
import pathlib

import pytest

from helpers import skip_without_nvrtc

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("kernel_registers", ROOT / "bench" / "kernel_registers.py")
kernel_registers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kernel_registers)


# the attention kernels causal and not; the DSA kernels' own masks take no such option
CASES = [(name, causal) for name in kernel_registers.KERNELS for causal in (False, True)
         if name.startswith("attention") or not causal]


@pytest.mark.parametrize("kernel,causal", CASES)
def test_ptxas_neither_spills_nor_waits_for_nor_serializes_a_wgmma(kernel, causal):
    with skip_without_nvrtc():
        registers, stores, loads, waits, serialized = kernel_registers.ptxas_report(kernel, causal, 128, 4096, {})
    assert waits == 0
    assert serialized == 0
    assert 0 < registers <= 255
    # The backward uses nearly all 255 registers: a fragment store's addresses, one register an
    # element (panel_offset's swizzle before eda1108), spilled it. With their lengths read at the
    # call, the Hopper DSA decode's producer (96 registers) spilled from bounds tests
    # guard_global_accesses could not yet prove away. The Hopper DSA prefill's producer spilled
    # at 80 registers under NVRTC, not under nvcc, which this report read until then.
    assert (stores, loads) == (0, 0)


def test_a_pass_config_is_key_equals_value():
    assert kernel_registers.pass_config("tilec.persistent=false") == ("tilec.persistent", False)
    assert kernel_registers.pass_config("tilec.warp_specialize=TRUE") == ("tilec.warp_specialize", True)
    with pytest.raises(Exception, match="is not KEY=VALUE"):
        kernel_registers.pass_config("tilec.persistent")

"""The kernel library (tilec.ops) against float64 references, on the GPU where there is one
(the library compiles for target "auto"), else on the CPU."""

import sys

import numpy as np
import pytest

import tilec
from tilec import ops
from tilec.jit import resolve_target

from helpers import assert_close, np_dtype, rand, rng  # noqa: F401  (rng is a fixture)

# The library compiles for target "auto": the GPU where there is one.
ON_GPU = resolve_target("auto") == "cuda"


def on_target(*arrays):
    """The arrays as the library is called with them: torch CUDA tensors on a GPU."""
    if not ON_GPU:
        return arrays
    import torch

    def to_gpu(a):
        bits = torch.from_numpy(np.ascontiguousarray(a).view(f"uint{a.dtype.itemsize * 8}")).cuda()
        return bits.view(getattr(torch, a.dtype.name))

    return tuple(to_gpu(a) for a in arrays)


def to_numpy(result, dtype):
    if not ON_GPU:
        return result
    import torch

    bits = result.view(torch.uint16 if result.element_size() == 2 else torch.uint8).cpu().numpy()
    return bits.view(np_dtype(dtype))


@pytest.mark.parametrize("M,N,K", [(128, 128, 64), (200, 260, 300), (1, 61, 17)])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gemm(M, N, K, dtype, rng):
    a, b = rand((M, K), dtype, rng), rand((K, N), dtype, rng)
    c = to_numpy(ops.gemm(*on_target(a, b), block_M=64, block_N=64), dtype)
    op_a, op_b = a.astype(np.float64), b.astype(np.float64)
    assert_close(c, op_a @ op_b, dtype, scale=np.abs(op_a) @ np.abs(op_b))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_library_matmul_with_b_stored_n_by_k(dtype, rng):
    # trans_B: C = A @ B^T, B [N, K] (the layout Hopper's tf32 tensor cores read); on the CPU
    # backend, ragged in M and N.
    from tilec.ops.gemm import matmul

    kernel = tilec.jit(matmul.__wrapped__, out_idx=[-1], target="cpu")(
        96, 80, 64, block_M=64, block_N=32, block_K=32, dtype=dtype, trans_B=True)
    a, b = rand((96, 64), dtype, rng), rand((80, 64), dtype, rng)
    c = kernel(a, b)
    op_a, op_b = a.astype(np.float64), b.astype(np.float64).T
    assert_close(c, op_a @ op_b, dtype, scale=np.abs(op_a) @ np.abs(op_b))


def dequantized(x, scale, rows_per_scale, cols_per_scale=128):
    full = np.repeat(np.repeat(scale.astype(np.float64), rows_per_scale, axis=0), cols_per_scale, axis=1)
    return x.astype(np.float64) * full[:x.shape[0], :x.shape[1]]


@pytest.mark.parametrize("M,N,K", [(128, 128, 128), (200, 260, 300), (61, 130, 1000)])
def test_fp8_block_scaled_gemm(M, N, K, rng):
    blocks = -(-K // 128)
    a, b = rand((M, K), "float8_e4m3", rng), rand((N, K), "float8_e4m3", rng)
    a_scale = rand((M, blocks), "float32", rng)
    b_scale = rand((-(-N // 128), blocks), "float32", rng)
    c = to_numpy(ops.fp8_gemm(*on_target(a, a_scale, b, b_scale)), "bfloat16")
    ref_a, ref_b = dequantized(a, a_scale, 1), dequantized(b, b_scale, 128)
    assert_close(c, ref_a @ ref_b.T, "bfloat16", scale=np.abs(ref_a) @ np.abs(ref_b).T)


def test_fp8_matmul_bf16_takes_float8_arrays_as_their_libraries_name_them(rng):
    # ml_dtypes and torch call the type float8_e4m3fn; the op once refused that name.
    a, b = rand((64, 128), "float8_e4m3", rng), rand((48, 128), "float8_e4m3", rng)
    c = to_numpy(ops.fp8_matmul_bf16(*on_target(a, b)), "bfloat16")
    op_a, op_b = a.astype(np.float64), b.astype(np.float64).T
    assert_close(c, op_a @ op_b, "bfloat16", scale=np.abs(op_a) @ np.abs(op_b))
    with pytest.raises(ValueError, match="a must be float8_e4m3, not float32"):
        ops.fp8_matmul_bf16(rand((64, 128), "float32", rng), b)


def test_gemm_errors_name_the_argument(rng):
    a, b = rand((4, 8), "float16", rng), rand((6, 4), "float16", rng)
    with pytest.raises(ValueError, match="b has 6 rows but a has 8 columns"):
        ops.gemm(a, b)
    with pytest.raises(ValueError, match="float16 or bfloat16"):
        ops.gemm(rand((4, 8), "float32", rng), rand((8, 4), "float32", rng))
    with pytest.raises(ValueError, match="unknown gemm config"):
        ops.gemm(a, rand((8, 4), "float16", rng), block_Q=3)
    x = rand((4, 256), "float8_e4m3", rng)
    with pytest.raises(ValueError, match=r"a_scale must have shape \(4, 2\)"):
        ops.fp8_gemm(x, rand((4, 1), "float32", rng), rand((8, 256), "float8_e4m3", rng),
                     rand((1, 2), "float32", rng))


@pytest.mark.parametrize("hip,capability,hopper", [(None, (9, 0), True), (None, (8, 0), False),
                                                   (None, (10, 0), False), ("6.2", (9, 0), False)])
def test_hopper_configs_go_to_nvidia_sm90_alone(hip, capability, hopper, monkeypatch, request):
    # ROCm's torch reports MI200 (gfx90a) as capability (9, 0): it must not get the Hopper
    # configurations (TMA, wgmma, two consumer warpgroups).
    import importlib
    from types import SimpleNamespace

    from tilec.ops import attention, device

    gemm = importlib.import_module("tilec.ops.gemm")  # the module: tilec.ops.gemm, the attribute, is the function

    properties = SimpleNamespace(major=capability[0], minor=capability[1], multi_processor_count=132)
    fake_torch = SimpleNamespace(version=SimpleNamespace(hip=hip),
                                 cuda=SimpleNamespace(get_device_properties=lambda index: properties))
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    device.gpu_facts.cache_clear()  # asked once a device: this test's fake GPU is another each case
    request.addfinalizer(device.gpu_facts.cache_clear)
    tensor = SimpleNamespace(is_cuda=True, device=SimpleNamespace(index=0))
    assert device.is_hopper(tensor) is hopper
    assert gemm._default_config(tensor) is (gemm.HOPPER_GEMM_CONFIG if hopper else gemm.DEFAULT_GEMM_CONFIG)
    forward, backward = ((attention.HOPPER_CONFIGS, attention.HOPPER_BACKWARD_CONFIGS) if hopper else
                         (attention.AMD_CONFIGS, attention.AMD_BACKWARD_CONFIGS) if hip else
                         (attention.GPU_CONFIGS, attention.GPU_BACKWARD_CONFIGS))
    assert attention._config(tensor, 128) is forward[128]
    assert attention._config(tensor, 128, backward=True) is backward[128]
    assert not device.is_hopper(np.zeros(1)) and attention._config(np.zeros(1), 128) is attention.CPU_CONFIG
    assert device.multiprocessors(tensor) == 132



def test_library_kernels_compile_for_where_their_tensor_lives(monkeypatch, rng):
    # On a machine with a GPU, "auto" is cuda; a NumPy array or CPU tensor still runs on the CPU
    # backend (torch.ops.tilec.gemm on CPU tensors failed there: "in CPU memory but compiled for CUDA").
    from types import SimpleNamespace

    from tilec.ops import device
    from tilec.ops.gemm import matmul

    monkeypatch.setattr(device, "resolve_target", lambda target: "cuda" if target == "auto" else target)
    on_cpu = device.for_device_of(np.zeros(1), matmul)
    assert on_cpu.target == "cpu" and device.for_device_of(np.zeros(1), matmul) is on_cpu
    assert device.for_device_of(SimpleNamespace(is_cuda=True), matmul) is matmul
    a, b = rand((32, 48), "float16", rng), rand((48, 16), "float16", rng)
    assert_close(on_cpu(32, 16, 48, dtype="float16", block_M=32, block_N=16, block_K=16)(a, b),
                 a.astype(np.float64) @ b.astype(np.float64), "float16")

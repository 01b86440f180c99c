"""Which tile configuration a library kernel takes, from the tensor it is called on."""


def on_gpu(tensor):
    """Whether `tensor` lives on a GPU (a torch CUDA or ROCm tensor); NumPy arrays and CPU
    tensors run on the CPU backend."""
    return getattr(tensor, "is_cuda", False)


def is_hopper(tensor):
    """Whether `tensor` lives on an NVIDIA Hopper GPU (sm_90: TMA, wgmma). ROCm's torch calls
    its GPUs CUDA devices too and reports gfx90a (MI200) as capability (9, 0), so a ROCm
    build never counts."""
    if not on_gpu(tensor):
        return False
    import torch  # noqa: PLC0415 (a GPU tensor is a torch tensor)

    return torch.version.hip is None and tuple(torch.cuda.get_device_capability(tensor.device)) == (9, 0)


def is_amd(tensor):
    """Whether `tensor` lives on an AMD GPU (ROCm's torch: 64 KiB of LDS a block, MFMA)."""
    if not on_gpu(tensor):
        return False
    import torch  # noqa: PLC0415

    return torch.version.hip is not None

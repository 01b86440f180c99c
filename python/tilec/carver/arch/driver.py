"""CUDA device properties, read through torch (tilelang.carver.arch.driver)."""

import importlib.util

_FORMATS = {"bytes": 1, "kb": 1024, "mb": 1024 * 1024}


def get_cuda_device_properties(device_id=0):
    """torch.cuda.get_device_properties(device_id), or None without torch or a GPU."""
    if importlib.util.find_spec("torch") is None:
        return None
    import torch

    if not torch.cuda.is_available():
        return None
    return torch.cuda.get_device_properties(device_id)


def _properties(device_id):
    properties = get_cuda_device_properties(device_id)
    if properties is None:
        raise RuntimeError(f"no properties of CUDA device {device_id}: reading them needs "
                           f"torch and a GPU it sees")
    return properties


def _in(value, format):
    if format not in _FORMATS:
        raise ValueError(f"format {format!r} is not one of {', '.join(_FORMATS)}")
    return int(value) // _FORMATS[format]


def get_device_name(device_id=0):
    """The device's name ("NVIDIA H200"), or None without one."""
    properties = get_cuda_device_properties(device_id)
    return properties.name if properties is not None else None


def get_num_sms(device_id=0):
    """The device's streaming multiprocessors (132 on an H100 or H200)."""
    return _properties(device_id).multi_processor_count


def get_shared_memory_per_block(device_id=0, format="bytes"):
    """The shared memory a block has without opting in (48 KB)."""
    return _in(_properties(device_id).shared_memory_per_block, format)


def get_max_dynamic_shared_size_bytes(device_id=0, format="bytes"):
    """The shared memory of one multiprocessor (228 KB on sm_90)."""
    return _in(_properties(device_id).shared_memory_per_multiprocessor, format)


def get_l2_cache_size(device_id=0, format="bytes"):
    """The device's L2 cache."""
    return _in(_properties(device_id).L2_cache_size, format)


__all__ = ["get_cuda_device_properties", "get_device_name", "get_l2_cache_size",
           "get_max_dynamic_shared_size_bytes", "get_num_sms", "get_shared_memory_per_block"]

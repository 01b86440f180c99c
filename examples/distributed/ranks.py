"""What the distributed examples share: the process group of a torchrun job, on one GPU a rank
through NCCL, or on the CPU through gloo. Importing it keeps NVLink multicast off (NVLS in NCCL,
multicast in torch's symmetric memory and NVSHMEM) in this process and the ones it starts."""

import os
import sys

MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
os.environ.update(MULTICAST_OFF)

import torch  # noqa: E402  (after the environment NCCL reads)
import torch.distributed as dist  # noqa: E402


def start(device="auto"):
    """(rank, world_size, device) of this torchrun rank, its process group started: device
    "cuda" (a GPU a rank, NCCL), "cpu" (gloo), or "auto": cuda when this node has a GPU for each
    of its ranks."""
    if "RANK" not in os.environ:
        raise SystemExit("run this under torchrun, e.g. torchrun --standalone --nproc-per-node 2 " +
                         os.path.basename(__import__("__main__").__file__))
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank, local_world = int(os.environ["LOCAL_RANK"]), int(os.environ["LOCAL_WORLD_SIZE"])
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() and torch.cuda.device_count() >= local_world else "cpu"
    if device == "cuda":
        if torch.cuda.device_count() < local_world:
            raise SystemExit(f"{local_world} ranks on this node need as many GPUs; it has {torch.cuda.device_count()}")
        gpu = torch.device("cuda", local_rank)
        torch.cuda.set_device(gpu)
        dist.init_process_group("nccl", device_id=gpu)
        return rank, world, gpu
    if device != "cpu":
        raise SystemExit(f"--device must be auto, cuda or cpu, not {device!r}")
    dist.init_process_group("gloo")
    return rank, world, torch.device("cpu")


def say(line):
    """Prints `line` in one write: the ranks share torchrun's stdout, and a line printed in parts
    could interleave with another rank's."""
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), (line + "\n").encode())


def all_gather_rows(shard, rows_of_rank):
    """The ranks' `shard`s (each rank's rows_of_rank[rank] rows) concatenated along dim 0, in
    rank order. Gathered as bytes, so that any dtype (float8 too) goes through NCCL and gloo;
    shorter shards are padded to the longest for the collective and trimmed after."""
    rank, longest = dist.get_rank(), max(rows_of_rank)
    assert shard.shape[0] == rows_of_rank[rank], (shard.shape, rows_of_rank, rank)
    raw = shard.contiguous().view(torch.uint8).reshape(shard.shape[0], -1)
    padded = torch.zeros((longest, raw.shape[1]), dtype=torch.uint8, device=shard.device)
    padded[:raw.shape[0]] = raw
    gathered = [torch.empty_like(padded) for _ in rows_of_rank]
    dist.all_gather(gathered, padded)
    rows = torch.cat([part[:n] for part, n in zip(gathered, rows_of_rank)])
    return rows.view(shard.dtype).reshape(-1, *shard.shape[1:])

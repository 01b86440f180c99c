"""AutotuneResult: what a tuning run found."""

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class AutotuneResult:
    """latency: the best config's time per run in ms (None when tuning was
    skipped because the call gave the tuned arguments); config: that config
    (the dict from configs); ref_latency: ref_prog's time on the same inputs
    (None without ref_prog); libcode: the kernel's generated source; func: the
    function tuned; kernel: the compiled tilec.Kernel, whose .latency,
    .config and .ref_latency are these too."""

    latency: float | None = None
    config: dict | None = None
    ref_latency: float | None = None
    libcode: str | None = None
    func: Callable | None = None
    kernel: Any = None

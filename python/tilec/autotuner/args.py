"""What the tuner compiles with and what it measures with (AutoTuner's
set_compile_args and set_profile_args)."""

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class CompileArgs:
    """tilec.jit's arguments for every config. target: "auto", "cpu",
    "cuda", "hip", or TileLang's {"kind": ..., "arch": ...}; a config's
    "pass_configs" entry is merged over pass_configs. compile_flags are the
    tuned jit function's."""

    out_idx: Any = None
    target: Any = "auto"
    arch: str | None = None
    pass_configs: dict | None = None
    compile_flags: tuple = ()

    def target_and_arch(self):
        if isinstance(self.target, dict):
            return self.target.get("kind", "auto"), self.target.get("arch", self.arch)
        return self.target, self.arch


@dataclass(frozen=True)
class ProfileArgs:
    """How each config is checked and timed (TileLang's names and defaults).

    supply_type: how generated inputs are drawn (None: Auto); supply_prog, when
    given, makes them instead from the kernel's input params. ref_prog, unless
    skip_check, is run on the same inputs and its outputs compared with the
    kernel's within rtol/atol, at most max_mismatched_ratio of the elements
    differing; manual_check_prog(outputs, ref_outputs) replaces that comparison.
    cache_input_tensors keeps the first config's inputs for the others whose
    inputs have the same shapes and dtypes."""

    warmup: int = 25
    rep: int = 100
    timeout: float = 30
    supply_type: Any = None
    ref_prog: Callable | None = None
    supply_prog: Callable | None = None
    rtol: float = 1e-2
    atol: float = 1e-2
    max_mismatched_ratio: float = 0.01
    skip_check: bool = False
    manual_check_prog: Callable | None = None
    cache_input_tensors: bool = False
    backend: str = "event"

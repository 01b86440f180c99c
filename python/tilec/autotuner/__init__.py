"""tilec.autotuner: TileLang's autotuner surface (autotune, AutoTuner,
set_autotune_inputs). See tuner.py for how a tuning runs, cache.py for what it
keeps on disk, and docs/language.md, "Autotuning"."""

from .capture import get_autotune_inputs, set_autotune_inputs
from .decorator import autotune
from .result import AutotuneResult
from .tuner import AutoTuner

__all__ = ["AutoTuner", "AutotuneResult", "autotune", "get_autotune_inputs",
           "set_autotune_inputs"]

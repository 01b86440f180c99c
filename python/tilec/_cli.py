"""The `tilec` console script: runs the command-line binary built into the package."""

import os
import sys
from pathlib import Path

from . import _core


def main():
    # The built parts lie together, beside _core: in an editable install that is not where
    # this file is.
    binary = Path(_core.__file__).resolve().parent / "bin" / "tilec"
    if not binary.is_file():
        sys.exit(f"tilec: {binary} is not built; run scripts/setup.sh or pip install .")
    os.execv(binary, [str(binary), *sys.argv[1:]])

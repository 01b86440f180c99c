"""The `tilec` console script: runs the command-line binary built into the package."""

import os
import sys
from pathlib import Path


def main():
    binary = Path(__file__).resolve().parent / "bin" / "tilec"
    if not binary.is_file():
        sys.exit(f"tilec: {binary} is not built; run scripts/setup.sh")
    os.execv(binary, [str(binary), *sys.argv[1:]])

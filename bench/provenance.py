"""Which commit a benchmark table was measured at, for the line --append writes above it."""

import os
import subprocess


def commit():
    """$TILEC_COMMIT when set, else git's short HEAD of this checkout, else "unknown". The device
    machine's checkout carries a .git that can be older than the working tree sent with the call:
    a script there names the commit it measures in $TILEC_COMMIT."""
    named = os.environ.get("TILEC_COMMIT", "").strip()
    if named:
        return named
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          cwd=os.path.dirname(os.path.abspath(__file__)))
    return done.stdout.strip() or "unknown"

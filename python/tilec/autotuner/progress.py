"""The tuner's progress: a bar on a terminal, nothing elsewhere.

On a terminal (stderr a tty) the bar is tqdm's when tqdm is installed, else a
one-line counter redrawn in place; when stderr is not a terminal (a log file,
CI, a pipe) nothing is printed.
"""

import sys


def progress(total, description):
    """A context manager whose value has update(n=1)."""
    stream = sys.stderr
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return _Silent()
    try:
        import tqdm
    except ImportError:
        return _Counter(total, description, stream)
    return tqdm.tqdm(total=total, desc=description, file=stream, leave=True)


class _Silent:
    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        pass

    def update(self, n=1):
        pass


class _Counter:
    def __init__(self, total, description, stream):
        self.total, self.description, self.stream = total, description, stream
        self.done = 0

    def __enter__(self):
        self._draw()
        return self

    def __exit__(self, *exc_info):
        self.stream.write("\n")
        self.stream.flush()

    def update(self, n=1):
        self.done += n
        self._draw()

    def _draw(self):
        self.stream.write(f"\r{self.description}: {self.done}/{self.total}")
        self.stream.flush()

"""GPU checks under a watchdog: a kernel that hangs the GPU fails its own test, not the suite.

``Watchdog.call(path, function, **kwargs)`` runs ``function(**kwargs)`` (a function of the
Python file at ``path``, returning something JSON can carry) in a worker process and returns
its result. The worker stays up between calls, so torch, the CUDA context and compiled kernels
are made once. A call that runs past its time limit kills the worker and raises ``Hang``; one
that raises, or kills the worker, raises ``WorkerError`` with the worker's traceback. Either
way the next call starts a fresh worker: after a fault the CUDA context is unusable, and a
hung kernel can only be stopped by ending its process.

Run as a script, this file is the worker: it reads one JSON request a line from stdin and
writes one JSON reply a line to the file descriptor named by its argument.
"""

import importlib.util
import json
import os
import select
import subprocess
import sys
import traceback


class Hang(AssertionError):
    pass


class WorkerError(AssertionError):
    pass


class Watchdog:
    def __init__(self, seconds):
        self.seconds = seconds
        self._worker = None
        self._replies = None

    def call(self, path, function, **kwargs):
        if self._worker is None:
            self._start()
        request = json.dumps({"path": os.path.abspath(path), "function": function, "kwargs": kwargs})
        try:
            self._worker.stdin.write(request + "\n")
            self._worker.stdin.flush()
        except BrokenPipeError:
            self._died(f"{function}({kwargs})")
        ready, _, _ = select.select([self._replies], [], [], self.seconds)
        if not ready:
            self._kill()
            raise Hang(f"{function}({kwargs}) did not finish in {self.seconds} s (the GPU hung or "
                       f"the kernel never ended); its worker was killed")
        line = self._replies.readline()
        if not line:
            self._died(f"{function}({kwargs})")
        reply = json.loads(line)
        if "error" in reply:
            self._kill()
            raise WorkerError(f"{function}({kwargs}) raised in the worker:\n{reply['error']}")
        return reply["result"]

    def close(self):
        """Ends the worker as a normal exit (end of its input), so tools watching it, such as
        compute-sanitizer, get to report; one that doesn't end in 30 s is killed."""
        if self._worker is None:
            return
        try:
            self._worker.stdin.close()
            self._worker.wait(timeout=30)
        except (BrokenPipeError, subprocess.TimeoutExpired):
            pass
        self._kill()

    def _kill(self):
        if self._worker is not None:
            self._worker.kill()
            self._worker.wait()
            self._replies.close()
            self._worker = None

    def _start(self):
        read_end, write_end = os.pipe()
        self._worker = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), str(write_end)], stdin=subprocess.PIPE,
            pass_fds=(write_end,), text=True)
        os.close(write_end)
        self._replies = os.fdopen(read_end, "r")

    def _died(self, what):
        code = self._worker.wait()
        self._kill()
        raise WorkerError(f"{what}: the worker died (exit status {code}); its output is above")


def _serve(reply_fd):
    replies = os.fdopen(reply_fd, "w")
    modules = {}
    for line in sys.stdin:
        request = json.loads(line)
        try:
            path = request["path"]
            if path not in modules:
                spec = importlib.util.spec_from_file_location(f"watched_{len(modules)}", path)
                modules[path] = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(modules[path])
            reply = {"result": getattr(modules[path], request["function"])(**request["kwargs"])}
        except Exception:  # noqa: BLE001 - the parent shows it and restarts the worker
            reply = {"error": traceback.format_exc()}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


if __name__ == "__main__":
    _serve(int(sys.argv[1]))

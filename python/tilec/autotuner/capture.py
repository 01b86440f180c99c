"""set_autotune_inputs: the inputs every config is checked and timed on.

    with set_autotune_inputs(q, k, v, cu_seqlens, max_seqlen):
        kernel = flashattn(...)

The inputs are the kernel's call arguments (its tensors and scalars, without
the outputs its out_idx allocates), given as arguments or as one list. The
contexts nest; each thread has its own.
"""

import threading

_stacks = threading.local()


def _stack():
    if not hasattr(_stacks, "inputs"):
        _stacks.inputs = []
    return _stacks.inputs


class AutotuneInputs:
    """The context set_autotune_inputs returns."""

    __slots__ = ("tensors",)

    def __init__(self, tensors):
        self.tensors = tensors

    def __enter__(self):
        _stack().append(self)
        return self

    def __exit__(self, *exc_info):
        _stack().pop()


def set_autotune_inputs(*args):
    """set_autotune_inputs(a, b, c) or set_autotune_inputs([a, b, c])."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return AutotuneInputs(list(args[0]))
    return AutotuneInputs(list(args))


def get_autotune_inputs():
    """The innermost set_autotune_inputs' list on this thread, or None."""
    stack = _stack()
    return stack[-1].tensors if stack else None

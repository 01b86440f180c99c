"""A pytest plugin for make_corpus.py: records every call of the core's
compile (source, bindings, target, arch, pass configs) that the tests make,
and writes them as JSON lines to $TILEC_FUZZ_RECORD when the session ends.

    TILEC_FUZZ_RECORD=calls.jsonl PYTHONPATH=tests/fuzz \
        .venv/bin/python -m pytest -q -p record_compiles tests/python
"""

import json
import os

from tilec import _core

_calls = []


def pytest_configure(config):
    compile_in_core = _core.compile

    # The arguments after the pass configs (the host compiler's flags, for CPU kernels) are no
    # part of a fuzz input: passed on, not recorded.
    def recording_compile(source, filename, first_line, name, bindings, target, arch,
                          pass_configs, *host_compiler):
        _calls.append(dict(source=source, filename=filename, first_line=first_line, name=name,
                           bindings=bindings, target=target, arch=arch,
                           pass_configs=dict(pass_configs)))
        return compile_in_core(source, filename, first_line, name, bindings, target, arch,
                               pass_configs, *host_compiler)

    _core.compile = recording_compile


def pytest_unconfigure(config):
    with open(os.environ["TILEC_FUZZ_RECORD"], "w", encoding="utf-8") as out:
        for call in _calls:
            # a host object the core calls into (make_corpus writes it as opaque) by its type's name
            out.write(json.dumps(call, default=lambda host: f"<{type(host).__qualname__}>") + "\n")

"""pytest plugin (`-p emit_kernels`, with scripts/ on PYTHONPATH): when the session ends, the
generated source of every kernel the tests compiled (tests/python/helpers.py RECORDED_KERNELS)
for CUDA sm_90a (the contiguous and the general variant) and HIP gfx90a, one file each in
$TILEC_EMIT_DIR. A file is named by a hash of its kernel with the checkout's path
($TILEC_EMIT_ROOT) taken out, and that path is taken out of its text, so two checkouts'
folders compare file by file (scripts/diff_generated.sh)."""

import hashlib
import os
import pathlib

VARIANTS = [("cuda", "sm_90a", "contiguous"), ("cuda", "sm_90a", "general"), ("hip", "gfx90a", "contiguous")]


def pytest_sessionfinish(session, exitstatus):
    from helpers import RECORDED_KERNELS

    from tilec import _core
    from tilec.jit import core_pass_configs

    root = os.environ["TILEC_EMIT_ROOT"]
    out = pathlib.Path(os.environ["TILEC_EMIT_DIR"])
    out.mkdir(parents=True, exist_ok=True)
    for key, kernel in RECORDED_KERNELS.items():
        name = hashlib.sha1(key.replace(root, "ROOT").encode()).hexdigest()[:16]
        for target, arch, variant in VARIANTS:
            pass_configs = dict(kernel.pass_configs)
            if variant == "general":
                pass_configs["tilec.specialize_contiguous"] = False
            try:
                text = _core.emit(kernel.source, kernel.filename, kernel.first_line, kernel.name, kernel.bindings,
                                  target, arch, core_pass_configs(pass_configs), "source")
            except Exception as e:  # noqa: BLE001  (a kernel that stops compiling is a difference too)
                text = f"error: {type(e).__name__}: {e}"
            (out / f"{name}_{target}_{variant}.txt").write_text(f"// {kernel!r}\n" + text.replace(root, "ROOT"))

"""The kernel cache is private to its user: a cache folder another user could write is
refused (the kernel still builds and runs, in a private folder of the process), the cache is
0700 folders and 0600 files whatever the umask, and a library another user planted in it is
never loaded. Each case runs a fresh Python process, as a user's program would."""

import hashlib
import os
import pathlib
import re
import stat
import subprocess
import sys
import textwrap

import pytest

KERNEL_SCRIPT = textwrap.dedent("""\
    import numpy as np
    import tilec
    import tilec.language as T

    @T.prim_func
    def double(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
        with T.Kernel(1) as bx:
            for i in T.serial(8):
                B[i] = A[i] * 2.0

    a = np.arange(1, 9, dtype=np.float32)
    b = np.zeros(8, np.float32)
    tilec.jit(double, target="cpu")(a, b)
    assert (b == a * 2).all(), b
    print("ran")
""")


def run_kernel(tmp_path, cache, umask=None):
    script = tmp_path / "kernel.py"
    script.write_text(KERNEL_SCRIPT)
    env = dict(os.environ, TILEC_CACHE_DIR=str(cache))
    set_umask = None if umask is None else (lambda: os.umask(umask))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                          timeout=300, preexec_fn=set_umask)
    assert done.returncode == 0 and done.stdout == "ran\n", done.stderr
    return done


def test_cache_folder_others_can_write_is_refused_and_the_kernel_still_runs(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    done = run_kernel(tmp_path, shared)
    assert (f"tilec cache: not using {shared}: {shared} is writable by its group and others "
            f"(mode 0777)") in done.stderr
    assert list(shared.iterdir()) == [], "the refused folder was written to"
    private = re.search(r"This process keeps its cache in (\S+), removed when it exits",
                        done.stderr)
    assert private, done.stderr
    assert not pathlib.Path(private.group(1)).exists(), "the private folder outlived its process"


def test_cache_is_private_under_umask_000(tmp_path):
    cache = tmp_path / "fresh" / "cache"
    run_kernel(tmp_path, cache, umask=0)
    paths = [cache.parent, *cache.parent.rglob("*")]
    assert any(path.suffix == ".so" for path in paths)
    for path in paths:
        mode = path.lstat().st_mode
        assert stat.S_IMODE(mode) == (0o700 if stat.S_ISDIR(mode) else 0o600), path


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user (chown)")
def test_library_planted_by_another_user_is_not_loaded(tmp_path):
    cache = tmp_path / "cache"
    run_kernel(tmp_path, cache)
    [library] = (cache / "cpu").glob("*.so")
    marker = tmp_path / "planted-library-ran"
    planted_source = tmp_path / "planted.c"
    planted_source.write_text(
        "#include <stdio.h>\n"
        "__attribute__((constructor)) static void mark(void) {\n"
        f'  FILE* f = fopen("{marker}", "w");\n'
        "  if (f) fclose(f);\n"
        "}\n")
    planted = tmp_path / "planted.so"
    subprocess.run(["cc", "-shared", "-fPIC", str(planted_source), "-o", str(planted)], check=True)
    data = planted.read_bytes()
    sidecar = library.with_name(library.name + ".sha256")
    library.write_bytes(data)
    sidecar.write_text(hashlib.sha256(data).hexdigest() + "\n")
    nobody = 65534
    for path in (library, sidecar):
        os.chown(path, nobody, nobody)
    done = run_kernel(tmp_path, cache)
    assert not marker.exists(), "a library of another user ran in this process"
    assert f"{library} belongs to uid {nobody}" in done.stderr
    assert library.stat().st_uid == os.geteuid(), "the entry was not rebuilt"

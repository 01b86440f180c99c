"""TileLang's example programs, run on tilec after swapping the imports (issue 13).

    python bench/tilelang_conformance.py /path/to/tilelang [--out DIR] [-j N]
        [--timeout 120] [--families gemm,norm] [--programs SUBSTRING] [--run-skipped]
        [--cuda-arch sm_90a]

The argument is a TileLang checkout (a folder with examples/) or its examples/
folder. The runner copies the family folders (FAMILIES) to a temporary folder,
rewrites every .py file there by one text rule (the import swap, below), runs each
program as `python prog.py` in its own folder, in its own process group, under a
timeout, and classifies the result by its exit status and its last traceback.

The import swap, the same for every file: each `import` / `from ... import`
statement (anywhere in the file, found by Python's parser) whose module is
`tilelang` or `tilelang.<sub>` is rewritten; nothing else in the file changes.
    import tilelang                  -> import tilec as tilelang
    import tilelang as tl            -> import tilec as tl
    import tilelang.language as T    -> import tilec.language as T
    import tilelang.testing          -> import tilec.testing; import tilec as tilelang
        (the second half keeps the name `tilelang` bound, as Python's form does)
    from tilelang import X           -> from tilec import X
    from tilelang.x.y import Z       -> from tilec.x.y import Z
Modules whose name merely starts with those letters (`tilelang_utils`) are left alone.

Which files are programs (printed with every run): a .py file of a family folder
(subfolders included) that does something when run, that is, whose top level has an
`if __name__ == "__main__":` block or a bare call statement, and that is not a helper.
A helper is a file another non-test file of the family imports, unless TileLang's
test_*.py files import it too or its name starts with example_ (helpers go along,
swapped like every file). TileLang's test_*.py and regression_*.py files are pytest
drivers, not programs. Excluded, by the rules in EXCLUSIONS: files for hardware other than the
H200 (a path part named amd, cdna*, sm100, sm120, aiter); files that never import
tilelang or whose name has the part `triton` (Triton or torch references); and
benchmark_*.py files and benchmark/ folders (speed comparisons against Triton,
FlashMLA and FlashInfer, without checks of their own).

Skipped (not run unless --run-skipped): a program whose every call in its folder's
test_*.py sits in a test that TileLang's own `requires_cuda_compute_version*` marker
turns off for the GPU's compute capability (nvidia-smi's, else 9.0: the H200).

Reference stand-ins: a program that checks its kernel against a package with no wheel on PyPI
(flash_attn: FlashAttention-2 builds CUDA from source) gets a plain-torch stand-in of the
functions it calls, from bench/reference_stand_ins/, when the package is not installed in the
programs' Python (--no-stand-ins turns this off). The stand-in announces itself on stderr; each
row of a program that imported one names it (column "stand-ins"), so a pass against a stand-in
is never silent.

--cuda-arch ARCH is for a machine without a GPU: every kernel whose target is "auto" is
compiled for CUDA at ARCH (NVRTC needs no GPU) instead of for the CPU, so each program runs
as far as its first use of a GPU. needs-gpu then says its kernels up to there compiled; the
compile errors are those the GPU machine would meet. (It patches tilec.jit in the programs'
processes only, through a sitecustomize module put first on their PYTHONPATH.)

Classes:
    pass             exit status 0 (the program's own checks passed)
    import           a tilelang module or name tilec lacks (ImportError, or
                     AttributeError on a tilec module)
    missing-package  a Python package the program needs is not installed
    compile          tilec's CompileError
    needs-gpu        stopped where a CUDA device was needed and there is none
    mismatch         an AssertionError (the program's own result check)
    runtime          any other error, or a crash
    timeout          ran past --timeout (its process group is killed)
    skipped          see above
Each row has the program's first relevant error line (the exception, and the
innermost line of the program's own files it came through). Writes results.md (the
table, the failures counted by cause, the packages missing, the exclusions), results.json
and one log per program under --out.
"""

import argparse
import ast
import concurrent.futures
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

FAMILIES = [
    "gemm", "gemm_fp8", "deepseek_deepgemm", "gemm_splitk", "gemm_streamk", "blocksparse_gemm",
    "grouped_gemm", "warp_specialize", "dynamic_shape", "dequantize_gemm", "gemv", "norm",
    "online_softmax", "topk", "cast", "flash_attention", "flash_decoding", "attention_sink",
    "blocksparse_attention", "block_causal_attention", "deepseek_nsa", "linear_attention",
    "deepseek_mla", "deepseek_v32", "convolution", "elementwise",
]

CLASSES = ["pass", "import", "missing-package", "compile", "needs-gpu", "mismatch", "runtime",
           "timeout", "skipped"]

OTHER_HARDWARE = re.compile(r"^(amd|cdna\d*|sm100|sm120|aiter)$")

# Module names that come with TileLang itself: a program missing one of them lacks part of
# the surface tilec must provide, not a package to install.
TILELANG_MODULES = {"tilelang", "tilec", "tvm"}

NO_GPU = re.compile(
    r"Found no NVIDIA driver|Torch not compiled with CUDA enabled|No CUDA GPUs are available|"
    r"no CUDA-capable device|CUDA driver initialization failed|no CUDA: |"
    r"cuInit failed|cudaGetDeviceCount|CUDA_ERROR_NO_DEVICE|NVIDIA-SMI has failed|"
    r"CUDA is not available")


# ---- the import swap -------------------------------------------------------------------------

def _is_tilelang(module):
    return module == "tilelang" or module.startswith("tilelang.")


def _tilec_name(module):
    return "tilec" + module[len("tilelang"):]


def _swapped_import(node):
    """The text of an `import` statement with its tilelang modules swapped."""
    parts, rebind = [], False
    for alias in node.names:
        if not _is_tilelang(alias.name):
            parts.append(alias.name + (f" as {alias.asname}" if alias.asname else ""))
        elif alias.asname:
            parts.append(f"{_tilec_name(alias.name)} as {alias.asname}")
        elif alias.name == "tilelang":
            parts.append("tilec as tilelang")
        else:
            parts.append(_tilec_name(alias.name))
            rebind = True
    text = "import " + ", ".join(parts)
    return text + "; import tilec as tilelang" if rebind else text


def swap_imports(source):
    """(source with every tilelang import swapped for tilec's, number of statements swapped);
    the source unchanged and 0 when it does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source, 0
    edits = []  # (line, col, end_line, end_col, text), 1-based lines
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(_is_tilelang(a.name) for a in node.names):
            edits.append((node.lineno, node.col_offset, node.end_lineno, node.end_col_offset,
                          _swapped_import(node)))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _is_tilelang(node.module):
            edits.append((node.lineno, node.col_offset, node.end_lineno, node.end_col_offset,
                          None))
    lines = source.splitlines(keepends=True)
    for line, col, end_line, end_col, text in sorted(edits, reverse=True):
        if text is None:  # from tilelang... import: only the module name changes
            head = lines[line - 1]
            lines[line - 1] = head[:col] + re.sub(r"^from(\s+)tilelang", r"from\1tilec",
                                                  head[col:], count=1)
            continue
        tail = lines[end_line - 1][end_col:]
        lines[line - 1:end_line] = [lines[line - 1][:col] + text + tail]
    return "".join(lines), len(edits)


# ---- which files are programs ----------------------------------------------------------------

def _imported_modules(tree):
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _runs_something(tree):
    for node in tree.body:
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            return True
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            return True
    return False


def _is_driver(name):
    return name.startswith(("test_", "regression_")) or name in ("conftest.py", "__init__.py")


def exclusion(relpath, imports):
    """Why a candidate program is excluded, or None."""
    parts = relpath[:-len(".py")].replace(os.sep, "/").split("/")
    tokens = [t for part in parts for t in part.split("_")]
    if any(OTHER_HARDWARE.match(t) for t in tokens):
        return "hardware other than the H200 (amd, cdna, sm100, sm120, aiter in its path)"
    if "triton" in tokens or "tilelang" not in imports:
        return "not a tilelang program (never imports tilelang, or 'triton' in its name)"
    if parts[-1].startswith("benchmark_") or "benchmark" in parts[:-1]:
        return "a benchmark against other libraries (benchmark_*.py, benchmark/)"
    return None


def discover(examples, families):
    """(programs, excluded): programs as dicts of family, path (relative to examples/),
    module; excluded as (path, reason)."""
    programs, excluded = [], []
    for family in families:
        root = os.path.join(examples, family)
        if not os.path.isdir(root):
            continue
        files = {}
        for folder, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(names):
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    with open(path, encoding="utf-8", errors="replace") as f:
                        try:
                            files[path] = ast.parse(f.read())
                        except SyntaxError:
                            files[path] = None
        imported_by_files, imported_by_tests = set(), set()
        for path, tree in files.items():
            name = os.path.basename(path)
            if tree is None:
                continue
            if name.startswith("test_"):
                imported_by_tests |= _imported_modules(tree)
            elif not _is_driver(name):
                imported_by_files |= _imported_modules(tree) - {_module(path)}
        for path, tree in files.items():
            name = os.path.basename(path)
            if tree is None or _is_driver(name) or not _runs_something(tree):
                continue
            module = _module(path)
            if (module in imported_by_files and module not in imported_by_tests
                    and not name.startswith("example_")):
                continue  # a helper
            relpath = os.path.relpath(path, examples)
            reason = exclusion(relpath, _imported_modules(tree))
            if reason:
                excluded.append((relpath, reason))
            else:
                programs.append({"family": family, "path": relpath, "module": _module(path)})
    return programs, excluded


def _module(path):
    return os.path.basename(path)[:-len(".py")]


# ---- TileLang's own skips --------------------------------------------------------------------

def _version_marker(decorator):
    """(mode, (major, minor)) of a requires_cuda_compute_version* decorator, else None."""
    if not isinstance(decorator, ast.Call):
        return None
    name = ast.unparse(decorator.func).split(".")[-1]
    match = re.fullmatch(r"requires_cuda_compute_version(?:_(ge|gt|eq|lt|le))?", name)
    if not match:
        return None
    try:
        values = [ast.literal_eval(a) for a in decorator.args]
        keywords = {k.arg: ast.literal_eval(k.value) for k in decorator.keywords}
    except ValueError:
        return None
    mode = match.group(1) or keywords.get("mode", values[2] if len(values) > 2 else "ge")
    major = values[0] if values else keywords.get("major_version", 0)
    minor = values[1] if len(values) > 1 else keywords.get("minor_version", 0)
    return mode, (major, minor)


def _marker_allows(marker, capability):
    mode, version = marker
    return {"ge": capability >= version, "gt": capability > version, "eq": capability == version,
            "lt": capability < version, "le": capability <= version}[mode]


def tilelang_skips(folder, capability):
    """{module: reason} for the modules of `folder` that its test_*.py files call only from
    tests their compute-version markers turn off on `capability`."""
    runs, skips = {}, {}
    for name in sorted(os.listdir(folder)):
        if not (name.startswith("test_") and name.endswith(".py")):
            continue
        with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
            try:
                tree = ast.parse(f.read())
            except SyntaxError:
                continue
        bound = {}  # a name in the test file -> the module it comes from
        for node in tree.body:
            if isinstance(node, ast.Import):
                bound.update({a.asname or a.name: a.name for a in node.names})
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                bound.update({a.asname or a.name: node.module for a in node.names})
        for node in tree.body:
            if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test")):
                continue
            markers = [m for m in map(_version_marker, node.decorator_list) if m]
            allowed = all(_marker_allows(m, capability) for m in markers)
            called = {bound[n.id] for n in ast.walk(node)
                      if isinstance(n, ast.Name) and n.id in bound}
            for module in called:
                runs[module] = runs.get(module, False) or allowed
                if not allowed:
                    mode, version = next(m for m in markers if not _marker_allows(m, capability))
                    skips[module] = (f"TileLang's own test runs it only where compute capability "
                                     f"{mode} {version[0]}.{version[1]}")
    return {module: reason for module, reason in skips.items() if not runs[module]}


# ---- running and classifying -----------------------------------------------------------------

def copy_swapped(examples, families, destination):
    """Copies the family folders under `destination` with the import swap applied; returns
    {path relative to examples: statements swapped}."""
    swapped = {}
    for family in families:
        source = os.path.join(examples, family)
        if not os.path.isdir(source):
            continue
        shutil.copytree(source, os.path.join(destination, family),
                        ignore=shutil.ignore_patterns("__pycache__"))
        for folder, _, names in os.walk(os.path.join(destination, family)):
            for name in names:
                if not name.endswith(".py"):
                    continue
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    text, count = swap_imports(f.read())
                if count:
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(text)
                    swapped[os.path.relpath(path, destination)] = count
    return swapped


def last_exception(output):
    """(exception line, [(file, line) frames], the text from the exception line on) of the
    output's last traceback, else None."""
    lines = output.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call")]
    if not starts:
        return None
    frames, i = [], starts[-1] + 1
    while i < len(lines) and (lines[i].startswith(" ") or not lines[i].strip()):
        match = re.match(r'\s+File "([^"]+)", line (\d+)', lines[i])
        if match:
            frames.append((match.group(1), int(match.group(2))))
        i += 1
    if i == len(lines):
        return None
    return lines[i], frames, "\n".join(lines[i:])


def classify(returncode, timed_out, output, workdir):
    """(class, first relevant error line, missing package or None)."""
    def local(text):
        # Paths of the temporary copy become relative; a module's own path after an
        # ImportError's "from 'tilec'" is left out.
        return re.sub(r" \(/[^()]*\.py\)", "", text.replace(workdir + os.sep, ""))

    if timed_out:
        tail = [line for line in output.splitlines() if line.strip()]
        return "timeout", local(tail[-1].strip()) if tail else "(no output)", None
    if returncode == 0:
        return "pass", "", None
    found = last_exception(output)
    if found is None:
        if returncode < 0:
            return "runtime", f"killed by {signal.Signals(-returncode).name}", None
        tail = [line for line in output.splitlines() if line.strip()]
        return "runtime", local(f"exit status {returncode}: " + (tail[-1] if tail else "")), None
    exception, frames, message_block = found
    own = [f"{os.path.relpath(path, workdir)}:{line}" for path, line in frames
           if path.startswith(workdir + os.sep)]
    where = f" [{own[-1]}]" if own else ""
    message = local(exception.strip()) + where
    kind = exception.split(":", 1)[0].strip().split(".")[-1]
    if kind != "CompileError" and NO_GPU.search(message_block):
        return "needs-gpu", message, None
    missing = re.search(r"No module named '([\w.]+)'", exception)
    if kind in ("ModuleNotFoundError", "ImportError") and missing:
        top = missing.group(1).split(".")[0]
        if top not in TILELANG_MODULES and not _is_sibling(top, workdir):
            return "missing-package", message, top
        return "import", message, None
    if kind == "ImportError":
        return "import", message, None
    if kind == "AttributeError" and re.search(r"module '(tilec|tilelang)[\w.]*' has no attribute",
                                              exception):
        return "import", message, None
    if kind == "CompileError":
        return "compile", message, None
    if kind == "AssertionError" or "Tensor-likes are not close" in message_block:
        return "mismatch", message, None
    return "runtime", message, None


def cause_of(cls, error):
    """What a failure is for counting alike failures together: the missing module or name of
    an import failure, the package, a compile error's message without its location, the
    exception of any other."""
    text = re.sub(r" \[[^\[\]]*\]$", "", error)  # the program's own line
    if cls == "import":
        for pattern, name in ((r"No module named '([\w.]+)'", r"\1"),
                              (r"cannot import name '(\w+)' from '([\w.]+)'", r"\2.\1"),
                              (r"module '([\w.]+)' has no attribute '(\w+)'", r"\1.\2")):
            match = re.search(pattern, text)
            if match:
                return "lacks " + match.expand(name)
    if cls == "compile":
        return "compile: " + text.split(" error: ", 1)[-1]
    if cls in ("pass", "skipped", "timeout", "needs-gpu"):
        return cls
    return text


def _is_sibling(module, workdir):
    for folder, _, names in os.walk(workdir):
        if module + ".py" in names or os.path.basename(folder) == module:
            return True
    return False


# --cuda-arch: the programs' sitecustomize, which makes target "auto" mean CUDA at that arch.
CUDA_WITHOUT_GPU = """\
import importlib
import os

_jit = importlib.import_module("tilec.jit")  # the module: tilec.jit, the attribute, is the function

_arch = os.environ["TILEC_CONFORMANCE_CUDA_ARCH"]
_compile = _jit.JitFunction._compile


def _compile_for_cuda(self, capture_function):
    if self.target == "auto":
        self.target, self.arch = "cuda", self.arch or _arch
    return _compile(self, capture_function)


_jit.JitFunction._compile = _compile_for_cuda
_jit.resolve_target = lambda target: "cuda" if target == "auto" else target
"""


STAND_INS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference_stand_ins")
STAND_IN_NOTICE = re.compile(r"^\[conformance\] (\w+) is the torch stand-in", re.MULTILINE)


def stand_ins_needed(python):
    """The packages of STAND_INS that `python` cannot import."""
    needed = []
    for name in sorted(os.listdir(STAND_INS)):
        if not os.path.isfile(os.path.join(STAND_INS, name, "__init__.py")):
            continue
        probe = subprocess.run([python, "-c", f"import importlib.util, sys; "
                                f"sys.exit(importlib.util.find_spec({name!r}) is None)"],
                               capture_output=True, timeout=120)
        if probe.returncode != 0:
            needed.append(name)
    return needed


def link_stand_ins(names, workdir):
    """A folder of workdir holding (links to) only the stand-ins `names`, or None."""
    if not names:
        return None
    folder = os.path.join(workdir, ".stand_ins")
    os.makedirs(folder)
    for name in names:
        os.symlink(os.path.join(STAND_INS, name), os.path.join(folder, name))
    return folder


def run_program(program, workdir, timeout, python, cuda_arch=None, stand_ins=None):
    """Runs one program in its own process group; returns its result row. `stand_ins` (a
    folder, link_stand_ins) ends the programs' path."""
    path = os.path.join(workdir, program["path"])
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1", MPLBACKEND="Agg")
    if stand_ins:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), stand_ins]))
    if cuda_arch:
        site = os.path.join(workdir, ".cuda_without_gpu")
        env["TILEC_CONFORMANCE_CUDA_ARCH"] = cuda_arch
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [site, env.get("PYTHONPATH")]))
    start = time.monotonic()
    process = subprocess.Popen([python, os.path.basename(path)], cwd=os.path.dirname(path),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    timed_out = False
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(process.pid)
        output, _ = process.communicate()
    _kill_group(process.pid)  # whatever the program left running
    seconds = time.monotonic() - start
    text = output.decode("utf-8", errors="replace")
    cls, error, package = classify(process.returncode, timed_out, text,
                                   os.path.dirname(path))
    return dict(program, **{"class": cls, "seconds": round(seconds, 2), "error": error,
                            "cause": cause_of(cls, error), "package": package,
                            "stand_ins": sorted(set(STAND_IN_NOTICE.findall(text))),
                            "returncode": process.returncode, "output": text})


def _kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def gpu_capability():
    """(major, minor) of the first GPU by nvidia-smi, or None."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap,name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.match(r"\s*(\d+)\.(\d+)", out.stdout) if out.returncode == 0 else None
    return (int(match.group(1)), int(match.group(2))) if match else None


# ---- reporting -------------------------------------------------------------------------------

def _cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(results, excluded, header):
    counts = {c: sum(r["class"] == c for r in results) for c in CLASSES}
    lines = [header, "",
             ", ".join(f"{c} {n}" for c, n in counts.items() if n) + f" (of {len(results)})", "",
             "| family | program | class | s | stand-ins | first error line |",
             "| --- | --- | --- | ---: | --- | --- |"]
    for r in results:
        lines.append(f"| {r['family']} | {os.path.basename(r['path'])} | {r['class']} | "
                     f"{r['seconds']:.1f} | {', '.join(r.get('stand_ins', []))} | {_cell(r['error'])} |")
    lines += ["", "By cause:", "", "| programs | class | cause |", "| ---: | --- | --- |"]
    for (cls, cause), rows in by_cause(results):
        lines.append(f"| {len(rows)} | {cls} | {_cell(cause)} |")
    stood_in = [r for r in results if r.get("stand_ins")]
    if stood_in:
        lines += ["", f"{len(stood_in)} programs ran with reference stand-ins (bench/reference_stand_ins/, "
                  f"plain torch in place of a package that is not installed): "
                  + ", ".join(f"{os.path.basename(r['path'])} ({r['class']})" for r in stood_in)]
    packages = sorted({r["package"] for r in results if r["package"]})
    if packages:
        lines += ["", "Packages the programs need that are not installed: " + ", ".join(packages)]
    if excluded:
        lines += ["", "Excluded:", ""] + [f"- {path}: {reason}" for path, reason in excluded]
    return "\n".join(lines) + "\n"


def by_cause(results):
    """[((class, cause), rows)] of the failures, the most common first."""
    groups = {}
    for r in results:
        if r["class"] != "pass":
            groups.setdefault((r["class"], r["cause"]), []).append(r)
    return sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))


def print_table(results):
    width = max([len(os.path.basename(r["path"])) for r in results] + [7])
    print(f"{'family':24} {'program':{width}} {'class':15} {'s':>6}  first error line")
    for r in results:
        print(f"{r['family']:24} {os.path.basename(r['path']):{width}} {r['class']:15} "
              f"{r['seconds']:6.1f}  {r['error'][:160]}")


def examples_folder(checkout):
    nested = os.path.join(checkout, "examples")
    if os.path.isdir(nested):
        return nested
    if any(os.path.isdir(os.path.join(checkout, f)) for f in FAMILIES):
        return checkout
    raise SystemExit(f"{checkout}: neither a TileLang checkout with examples/ nor its examples/ "
                     f"folder (none of the families {', '.join(FAMILIES[:3])}, ... is in it)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("checkout", help="a TileLang checkout (with examples/) or its examples/")
    parser.add_argument("--out", default="conformance_out", help="folder for results and logs")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="programs run at once")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per program")
    parser.add_argument("--families", default=",".join(FAMILIES),
                        help="comma-separated families (default: all of issue 13's)")
    parser.add_argument("--programs", default="",
                        help="run only programs whose path contains this text")
    parser.add_argument("--run-skipped", action="store_true",
                        help="also run the programs TileLang's own tests skip on this GPU")
    parser.add_argument("--python", default=sys.executable, help="the Python that runs them")
    parser.add_argument("--no-stand-ins", action="store_true",
                        help="don't give the programs bench/reference_stand_ins/ for packages "
                             "their Python lacks")
    parser.add_argument("--cuda-arch", default=None,
                        help="without a GPU: compile auto-target kernels for CUDA at this arch "
                             "(sm_90a) and run each program up to its first GPU use")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("-j must be at least 1")
    if args.timeout <= 0:
        parser.error("--timeout must be positive")
    families = [f for f in args.families.split(",") if f]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        parser.error(f"unknown families {', '.join(unknown)} (known: {', '.join(FAMILIES)})")
    examples = examples_folder(args.checkout)

    programs, excluded = discover(examples, families)
    programs = [p for p in programs if args.programs in p["path"]]
    detected = gpu_capability()
    capability = detected or (9, 0)
    print("Programs: files with a __main__ block or a top-level call, not test_*/regression_*, "
          "not helpers (imported by a sibling, not by test_*, not example_*); excluded:")
    for path, reason in excluded:
        print(f"  {path}: {reason}")
    gpu = (f"GPU compute capability {capability[0]}.{capability[1]}" if detected
           else "no GPU (TileLang's skips judged for 9.0, the H200)")
    if args.cuda_arch:
        gpu += f", kernels compiled for CUDA {args.cuda_arch}"
    print(f"{len(programs)} programs, {gpu}, timeout {args.timeout:g} s, -j {args.jobs}")
    stand_ins = [] if args.no_stand_ins else stand_ins_needed(args.python)
    if stand_ins:
        print(f"Reference stand-ins for packages not installed: {', '.join(stand_ins)} ({STAND_INS})")

    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="tilelang_conformance_") as workdir:
        swapped = copy_swapped(examples, FAMILIES, workdir)
        stand_in_folder = link_stand_ins(stand_ins, workdir)
        if args.cuda_arch:
            os.makedirs(os.path.join(workdir, ".cuda_without_gpu"))
            with open(os.path.join(workdir, ".cuda_without_gpu", "sitecustomize.py"), "w",
                      encoding="utf-8") as f:
                f.write(CUDA_WITHOUT_GPU)
        skips = {}
        for family in families:
            folder = os.path.join(examples, family)
            if os.path.isdir(folder):
                skips[family] = tilelang_skips(folder, capability)
        to_run = []
        for program in programs:
            reason = skips[program["family"]].get(program["module"])
            if reason and not args.run_skipped:
                results.append(dict(program, **{"class": "skipped", "seconds": 0.0,
                                                "error": reason, "cause": "skipped",
                                                "package": None, "returncode": None,
                                                "output": ""}))
            else:
                to_run.append(program)
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = [pool.submit(run_program, p, workdir, args.timeout, args.python,
                                   args.cuda_arch, stand_in_folder) for p in to_run]
            for future in concurrent.futures.as_completed(futures):
                result = future.result()
                note = f"  (stand-ins: {', '.join(result['stand_ins'])})" if result["stand_ins"] else ""
                print(f"  {result['class']:15} {result['seconds']:6.1f} s  {result['path']}{note}",
                      flush=True)
                results.append(result)
    order = {p["path"]: i for i, p in enumerate(programs)}
    results.sort(key=lambda r: order[r["path"]])

    for r in results:
        with open(os.path.join(args.out, "logs", r["path"].replace(os.sep, "__") + ".log"), "w",
                  encoding="utf-8") as f:
            f.write(r.pop("output"))
    header = (f"TileLang examples on tilec ({len(results)} programs, {gpu}, "
              f"timeout {args.timeout:g} s)")
    print()
    print_table(results)
    with open(os.path.join(args.out, "results.md"), "w", encoding="utf-8") as f:
        f.write(markdown(results, excluded, header))
    with open(os.path.join(args.out, "results.json"), "w", encoding="utf-8") as f:
        json.dump({"gpu": gpu, "timeout": args.timeout, "results": results,
                   "excluded": [{"path": p, "reason": r} for p, r in excluded],
                   "swapped_imports": swapped}, f, indent=1)
    print("\nBy cause:")
    for (cls, cause), rows in by_cause(results):
        print(f"  {len(rows):3} {cls:15} {cause[:150]}")
    counts = {c: n for c in CLASSES if (n := sum(r["class"] == c for r in results))}
    print("\n" + ", ".join(f"{c} {n}" for c, n in counts.items()) + f" (of {len(results)})")
    print(f"results: {os.path.join(args.out, 'results.md')}, results.json, logs/")


if __name__ == "__main__":
    main()

"""The jit path's mutant loop: mutates the kernel sources and factory arguments
of the compile fuzzer's seed corpus (tests/fuzz/corpus/compile/), compiles
each mutant with tilec.jit(target="cpu") in a worker process, and reports
every mutant whose compile does anything but succeed or fail cleanly.

    .venv/bin/python tests/fuzz/jit_mutants.py --seconds 90 [--seed N] [--out DIR]
    .venv/bin/python tests/fuzz/jit_mutants.py --replay MUTANT.py   # one, in this process

Clean failures: a tilec.CompileError naming file:line:col with the source line
and a caret; an error that Python raises running the mutant's own code (a
mutated annotation that names nothing, a syntax error); a ValueError or
TypeError from tilec's Python face. Findings: a crash (the worker dies), a
hang (no answer within --timeout seconds), a CompileError without a location,
any other exception out of the core (a bare C++ exception), and any other
exception from inside tilec's Python code.

Each mutant is a self-contained Python file that defines KERNEL (a jit
function) and ARGS (its arguments by name); compiling it is KERNEL.compile(**ARGS).
The worker runs mutants one at a time, each under the timeout; it is started
again after a crash or a hang, and the mutant that caused it is run once more
alone in a fresh process to confirm it, then saved under --out/findings/.
Saved findings go to tests/fuzz/regressions/jit/ (tests/fuzz/README.md). One
that its run alone doesn't reproduce (a hang of a loaded machine, a worker
killed for the memory its earlier mutants left) is saved and listed, but fails
the run no more than the compile fuzzer's unreproduced inputs do (triage.py).
"""

import argparse
import ast
import hashlib
import importlib.util
import io
import json
import os
import pathlib
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import tokenize
import traceback

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fuzz" / "corpus" / "compile"
REGRESSIONS = ROOT / "tests" / "fuzz" / "regressions" / "jit"
PENDING = REGRESSIONS / "pending"

FINDINGS = {"crash", "hang", "unlocated-compile-error", "core-exception", "python-internal-error"}

# ------------------------------------------------------------------ seeds


class Seed:
    """A corpus input turned into jit form: the kernel's source (main function
    first, then the functions it binds), the factory's parameters with their
    values, the symbolic dims it declares and the arithmetic on them it binds, or, for a plain
    module file (the tests/error programs), the module's text and its prim_func's name."""

    def __init__(self, name, kernel, params, symbolic, module_text=None, func=None, arithmetic=None):
        self.name = name
        self.kernel = kernel
        self.params = params          # {name: Python value}
        self.symbolic = symbolic      # [name]
        self.arithmetic = arithmetic or {}  # {name: the Python expression the factory evaluates}
        self.module_text = module_text
        self.func = func


class _NotASeed(Exception):
    pass


def header_and_body(text):
    header, lines = [], text.splitlines(keepends=True)
    while lines and lines[0].startswith("#!"):
        header.append(lines.pop(0).rstrip("\n"))
    return header, "".join(lines)


ARITH_OPERATORS = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%"}  # fuzz_input.h's arith(...)


def arithmetic_text(node):
    """arith(OP, VALUE, VALUE) of ints and sym(...) as the Python expression a factory evaluates."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "sym":
        return f"T.symbolic({ast.unparse(node.args[0])!r})"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "arith" \
            and len(node.args) == 3 and isinstance(node.args[0], ast.Name) and node.args[0].id in ARITH_OPERATORS:
        op, left, right = node.args
        return f"({arithmetic_text(left)} {ARITH_OPERATORS[op.id]} {arithmetic_text(right)})"
    value = python_value(node)
    if isinstance(value, int) and not isinstance(value, bool):
        return repr(value)
    raise _NotASeed(ast.unparse(node))


def python_value(node):
    """A #!bind VALUE (parsed as a Python expression) as a Python value;
    ("sym", name) for a symbolic dim, ("arith", expression) for arithmetic on symbolic dims;
    None as the marker of a binding the factory doesn't take (module(...), func(...))."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = python_value(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [python_value(item) for item in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Name):  # a dtype word
        return node.id
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        kind = node.func.id
        if kind == "sym":
            return ("sym", ast.unparse(node.args[0]))
        if kind == "arith":
            return ("arith", arithmetic_text(node))
        if kind in ("module", "func"):
            return None
    raise _NotASeed(ast.unparse(node))  # tensor(...), opaque(...): not a factory's argument


def seed_from(path):
    text = path.read_text(encoding="utf-8")
    header, body = header_and_body(text)
    func, binds = None, {}
    for line in header:
        key, _, rest = line[2:].partition(" ")
        if key == "func":
            func = rest.strip()
        elif key == "bind":
            name, _, value = rest.partition("=")
            binds[name.strip()] = value.strip()
    tree = ast.parse(body)
    defs = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    main = defs.get(func)
    if main is None or not any("prim_func" in ast.unparse(d) for d in main.decorator_list):
        raise _NotASeed("no prim_func")  # eager jit functions take tensors: not here
    if not binds:  # a module file: its own imports and constants
        return Seed(path.stem, None, {}, [], module_text=body, func=func)
    params, symbolic, arithmetic = {}, [], {}
    for name, value_text in binds.items():
        value = python_value(ast.parse(value_text, mode="eval").body)
        if isinstance(value, tuple) and value[:1] == ("sym",):
            symbolic.append(name)
        elif isinstance(value, tuple) and value[:1] == ("arith",):
            arithmetic[name] = value[1]
        elif value is not None and name.isidentifier():
            params[name] = value
    return Seed(path.stem, body, params, symbolic, func=func, arithmetic=arithmetic)


def load_seeds(corpus):
    seeds = []
    for path in sorted(corpus.glob("*.py")):
        try:
            seeds.append(seed_from(path))
        except (_NotASeed, SyntaxError, ValueError):
            pass
    return seeds


# ------------------------------------------------------------------ mutants

INTERESTING_INTS = [0, 1, -1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 100, 127, 128, 129, 255,
                    256, 1000, 1024, 4096, 65535, 65536, 2**31 - 1, 2**31, -2**31, 2**32,
                    2**63 - 1, -2**63, 2**64, 10**30]
INTERESTING_FLOATS = [0.0, -0.0, 0.5, -1.5, 1e-30, 1e30, 1e308, float("inf"), float("-inf"),
                      float("nan")]
DTYPES = ["float16", "bfloat16", "float32", "float64", "float8_e4m3", "float8_e5m2", "int8",
          "int16", "int32", "int64", "uint8", "uint32", "bool", "float", "int", "complex64",
          "", "float32x4"]
OPERATORS = [["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>"],
             ["<", "<=", ">", ">=", "==", "!="],
             ["+=", "-=", "*=", "/=", "//=", "%=", "="]]
PRIMITIVES = ["Kernel", "Parallel", "Pipelined", "serial", "unroll", "vectorized", "copy", "gemm",
              "gemv", "fill", "clear", "alloc_shared", "alloc_fragment", "alloc_local",
              "reduce_max", "reduce_sum", "reduce_min", "reduce_abssum", "reduce_absmax",
              "atomic_add", "cumsum", "if_then_else", "exp", "exp2", "log", "log2", "sqrt",
              "rsqrt", "max", "min", "abs", "infinity", "cast", "ceildiv", "use_swizzle",
              "annotate_layout", "print", "symbolic", "Tensor", "float16", "float32", "int32"]
STATEMENTS = ["T.sync_threads()", "pass", "return", "break", "x = 1", "T.clear(x)",
              "for i in T.serial(0):", "if 0:", "while False:", "A = A", "del x"]


def interesting_value(value, rng):
    """A new value for a factory argument `value`."""
    choice = rng.random()
    if isinstance(value, bool) or choice < 0.1:
        return rng.choice([None, True, False, 0, "", (), [], -1])
    if isinstance(value, int):
        return rng.choice(INTERESTING_INTS + [value + 1, value - 1, value * 2, -value])
    if isinstance(value, float):
        return rng.choice(INTERESTING_FLOATS + [value * 2, -value])
    if isinstance(value, str):
        return rng.choice(DTYPES + [value * 2, value.upper(), "x" * 300])
    if isinstance(value, (tuple, list)):
        items = list(value)
        if items and rng.random() < 0.5:
            i = rng.randrange(len(items))
            items[i] = interesting_value(items[i], rng)
        elif items and rng.random() < 0.5:
            items.pop(rng.randrange(len(items)))
        else:
            items.append(rng.choice(items) if items else 1)
        return type(value)(items)
    return rng.choice([0, 1, "float16"])


def tokens_of(source):
    try:
        return [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
                if t.type in (tokenize.NAME, tokenize.NUMBER, tokenize.STRING, tokenize.OP)]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []


def replace_token(source, token, text):
    lines = source.splitlines(keepends=True)
    (row, col), (end_row, end_col) = token.start, token.end
    if row != end_row:
        return source
    line = lines[row - 1]
    lines[row - 1] = line[:col] + text + line[end_col:]
    return "".join(lines)


def mutate_source(source, rng):
    """`source` with one mutation, and what it was."""
    tokens = tokens_of(source)
    lines = source.splitlines(keepends=True)
    # Weighted away from what Python itself rejects before tilec sees it.
    kind = rng.choice(["number"] * 4 + ["string"] * 2 + ["operator"] * 2 + ["name"] * 3 +
                      ["primitive"] * 3 + ["delete-line", "duplicate-line", "swap-lines", "indent",
                                           "insert", "delete-token"])
    pick = lambda wanted: [t for t in tokens if wanted(t)]  # noqa: E731
    if kind == "number" and (numbers := pick(lambda t: t.type == tokenize.NUMBER)):
        t = rng.choice(numbers)
        new = repr(rng.choice(INTERESTING_INTS + INTERESTING_FLOATS[:7]))
        return replace_token(source, t, new), f"number {t.string} -> {new} (line {t.start[0]})"
    if kind == "string" and (strings := pick(lambda t: t.type == tokenize.STRING)):
        t = rng.choice(strings)
        new = repr(rng.choice(DTYPES))
        return replace_token(source, t, new), f"string {t.string} -> {new} (line {t.start[0]})"
    if kind == "operator":
        groups = {op: group for group in OPERATORS for op in group}
        if ops := pick(lambda t: t.string in groups):
            t = rng.choice(ops)
            new = rng.choice(groups[t.string])
            return replace_token(source, t, new), f"operator {t.string} -> {new} (line {t.start[0]})"
    if kind == "name" and (names := pick(lambda t: t.type == tokenize.NAME)):
        t = rng.choice(names)
        new = rng.choice(names).string
        return replace_token(source, t, new), f"name {t.string} -> {new} (line {t.start[0]})"
    if kind == "primitive":
        after_t = [b for a, b in zip(tokens, tokens[2:]) if a.string == "T" and b.type == tokenize.NAME]
        if after_t:
            t = rng.choice(after_t)
            new = rng.choice(PRIMITIVES)
            return replace_token(source, t, new), f"T.{t.string} -> T.{new} (line {t.start[0]})"
    if kind == "delete-token" and tokens:
        t = rng.choice(tokens)
        return replace_token(source, t, ""), f"deleted {t.string!r} (line {t.start[0]})"
    # Line mutations keep the decorator and def lines, which the wrapper needs.
    body = [i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith(("@", "def "))]
    if not body:
        return source, "none"
    i = rng.choice(body)
    if kind == "duplicate-line":
        lines.insert(i, lines[i])
        return "".join(lines), f"duplicated line {i + 1}"
    if kind == "swap-lines":
        j = rng.choice(body)
        lines[i], lines[j] = lines[j], lines[i]
        return "".join(lines), f"swapped lines {i + 1} and {j + 1}"
    if kind == "indent":
        lines[i] = ("    " + lines[i]) if rng.random() < 0.5 else re.sub(r"^    ", "", lines[i])
        return "".join(lines), f"re-indented line {i + 1}"
    if kind == "insert":
        indent = re.match(r"\s*", lines[i]).group(0)
        statement = rng.choice(STATEMENTS)
        lines.insert(i, indent + statement + "\n" + (indent + "    pass\n" if statement.endswith(":") else ""))
        return "".join(lines), f"inserted {statement!r} at line {i + 1}"
    del lines[i]
    return "".join(lines), f"deleted line {i + 1}"


def literal(value):
    """Python source for `value` (floats that repr can't write included)."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return f"float({str(value)!r})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + "".join(literal(v) + ", " for v in value) + ")"
    return repr(value)


def mutant_text(seed, kernel, params, description):
    """The mutant file: KERNEL and ARGS (see the module docstring)."""
    head = f"# tilec jit mutant of {seed.name}: {description}\n"
    if seed.module_text is not None:
        return (head + kernel + f"\n\nimport tilec as _tilec\n"
                f"KERNEL = _tilec.jit({seed.func}, target=\"cpu\")\nARGS = {{}}\n")
    lines = [head, "import tilec", "import tilec.language as T", "", "",
             f"def factory({', '.join(params)}):"]
    lines += [f"    {name} = T.symbolic({name!r})" for name in seed.symbolic]
    lines += [f"    {name} = {expression}" for name, expression in seed.arithmetic.items()]
    lines.append(textwrap.indent(kernel, "    ").rstrip())
    lines += [f"    return {seed.func}", "", "",
              "KERNEL = tilec.jit(factory, target=\"cpu\")",
              f"ARGS = {literal(params)}"]
    return "\n".join(lines) + "\n"


def make_mutant(seed, rng):
    kernel = seed.module_text if seed.module_text is not None else seed.kernel
    params = dict(seed.params)
    done = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        if params and rng.random() < 0.3:
            name = rng.choice(sorted(params))
            params[name] = interesting_value(params[name], rng)
            done.append(f"{name}={params[name]!r}")
        else:
            kernel, what = mutate_source(kernel, rng)
            done.append(what)
    return mutant_text(seed, kernel, params, "; ".join(done))


# ------------------------------------------------------------------ one mutant


def is_located(text):
    return re.match(r"[^\n]+:\d+:\d+: error: [^\n]*\n    [^\n]*\n    [ \t]*\^", text) is not None


def outcome_of_exception(error, path):
    import tilec

    if isinstance(error, tilec.CompileError):
        if is_located(str(error)):
            return "compile-error"
        return "unlocated-compile-error"
    # The innermost frame of tilec's Python code or of the mutant says whose error it is.
    package = str(ROOT / "python" / "tilec")
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if f.filename.startswith(package) or pathlib.Path(f.filename) == path]
    innermost = frames[-1] if frames else None
    if innermost and innermost.filename.startswith(package):
        if innermost.name == "_compile" and "_core.compile" in (innermost.line or ""):
            return "core-exception"  # raised by the C++ core, not a located CompileError
        if not isinstance(error, (ValueError, TypeError)):
            return "python-internal-error"
    return "python-error"


def run_mutant(path):
    """The outcome of compiling the mutant at `path`: {"outcome", "detail"}."""
    try:
        spec = importlib.util.spec_from_file_location(f"tilec_mutant_{pathlib.Path(path).stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.KERNEL.compile(**module.ARGS)
    except Exception as e:  # noqa: BLE001  (classified: that is the point)
        detail = "".join(traceback.format_exception_only(type(e), e)).strip()
        return {"outcome": outcome_of_exception(e, pathlib.Path(path)), "detail": detail[:3000]}
    return {"outcome": "compiled", "detail": ""}


def worker():
    """Reads mutant paths from stdin, answers one JSON line each on stdout."""
    protocol = sys.stdout
    sys.stdout = sys.stderr  # nothing a kernel or tilec prints can garble the answers
    import faulthandler

    faulthandler.enable()
    for line in sys.stdin:
        print(f"--- {line.strip()}", file=sys.stderr, flush=True)
        protocol.write(json.dumps(run_mutant(line.strip())) + "\n")
        protocol.flush()


# ------------------------------------------------------------------ the loop


class Worker:
    def __init__(self, env, log):
        self.env, self.log = env, log
        self.process = None

    def start(self):
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.log, env=self.env, text=True, start_new_session=True)

    def stop(self):
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.process = None

    def run(self, path, timeout):
        if self.process is None:
            self.start()
        self.process.stdin.write(f"{path}\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if not ready:
            self.stop()
            return {"outcome": "hang", "detail": f"no answer within {timeout} s"}
        answer = self.process.stdout.readline()
        if not answer:
            code = self.process.wait()
            self.process = None
            name = signal.Signals(-code).name if code < 0 else f"exit status {code}"
            return {"outcome": "crash", "detail": f"the worker died: {name}"}
        return json.loads(answer)


def replay_alone(path, env, timeout):
    """`path` run once in a fresh process: its outcome there."""
    try:
        done = subprocess.run([sys.executable, __file__, "--replay", str(path)], env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"outcome": "hang", "detail": f"no answer within {timeout} s"}, ""
    if done.returncode < 0:
        return ({"outcome": "crash", "detail": signal.Signals(-done.returncode).name},
                done.stderr[-4000:])
    lines = done.stdout.strip().splitlines()
    if not lines:
        return {"outcome": "crash", "detail": f"exit status {done.returncode}"}, done.stderr[-4000:]
    return json.loads(lines[-1]), done.stderr[-4000:]


def signature(result):
    """The kind of failure `result` is, without its particulars (numbers and
    quoted names), as the compile fuzzer's failure_signature has it."""
    first_line = (result["detail"].splitlines() or [""])[0]
    first_line = re.sub(r"'[^']*'", "'_'", first_line)
    return result["outcome"] + ": " + re.sub(r"\d[0-9a-fA-F]*", "N", first_line)[:200]


def known_signatures(env, timeout):
    """The signatures of the pending regressions' failures: bugs already known."""
    known = set()
    for path in sorted(PENDING.glob("*.py")):
        result, _ = replay_alone(path, env, timeout)
        if result["outcome"] in FINDINGS:
            known.add(signature(result))
    return known


def fuzz(args):
    seeds = load_seeds(args.corpus)
    if not seeds:
        sys.exit(f"jit_mutants: no seeds in {args.corpus}")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    rng = random.Random(seed)
    out = args.out or pathlib.Path(tempfile.mkdtemp(prefix="tilec-jit-mutants-"))
    (out / "findings").mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp(prefix="tilec-jit-work-"))
    env = dict(os.environ, TILEC_CACHE_DIR=str(work / "cache"))
    env.pop("TILEC_BOUNDS_CHECK", None)
    start = time.monotonic()
    known = known_signatures(env, args.timeout)
    print(f"jit_mutants: {len(seeds)} seeds, seed {seed}, {args.seconds} s, {len(known)} known "
          f"failures (regressions/jit/pending/), findings in {out}/findings", flush=True)
    counts = {}
    findings = {}  # signature -> [how many, the first one's report]
    with open(work / "worker.log", "w") as log:
        worker_process = Worker(env, log)
        n = 0
        try:
            while time.monotonic() < start + args.seconds:
                n += 1
                path = work / f"mutant_{n}.py"
                path.write_text(make_mutant(rng.choice(seeds), rng), encoding="utf-8")
                result = worker_process.run(path, args.timeout)
                counts[result["outcome"]] = counts.get(result["outcome"], 0) + 1
                if result["outcome"] in FINDINGS:
                    kind = signature(result)
                    if kind not in findings and kind not in known:
                        findings[kind] = [0, *report(path, result, env, args.timeout, out)]
                    findings.setdefault(kind, [0, "known: its input waits in regressions/jit/pending/", True])
                    findings[kind][0] += 1
                path.unlink()
        finally:
            worker_process.stop()
    shutil.rmtree(work, ignore_errors=True)
    summary = ", ".join(f"{count} {outcome}" for outcome, count in sorted(counts.items()))
    print(f"jit_mutants: {n} mutants in {time.monotonic() - start:.0f} s: {summary}")
    def status(kind, reproduced):
        return "known" if kind in known else "NEW" if reproduced else "not reproduced alone"

    for kind, (count, first, reproduced) in sorted(findings.items()):
        print(f"  {count:4d} {status(kind, reproduced)} {kind}\n         {first}")
    return 1 if any(status(kind, reproduced) == "NEW" for kind, (_, _, reproduced) in findings.items()) else 0


def report(path, result, env, timeout, out):
    """Where `path` is saved, and whether its run alone fails too."""
    confirmed, stderr = replay_alone(path, env, timeout)
    text = path.read_text(encoding="utf-8")
    digest = hashlib.sha1(text.encode()).hexdigest()[:10]
    saved = out / "findings" / f"{confirmed['outcome']}-{digest}.py"
    note = [f"outcome in the loop: {result['outcome']}: {result['detail']}",
            f"outcome alone: {confirmed['outcome']}: {confirmed['detail']}"]
    saved.write_text("".join(f"# {item.splitlines()[0][:300]}\n" for item in note) + text,
                     encoding="utf-8")
    if stderr:
        saved.with_suffix(".log").write_text(stderr, encoding="utf-8")
    return str(saved), confirmed["outcome"] in FINDINGS


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("TILEC_FUZZ_SECONDS", 90)),
                        help="how long to mutate (default $TILEC_FUZZ_SECONDS, else 90)")
    parser.add_argument("--seed", type=int, default=(int(os.environ["TILEC_FUZZ_SEED"])
                                                     if os.environ.get("TILEC_FUZZ_SEED") else None),
                        help="the random seed (default $TILEC_FUZZ_SEED, else a fresh one, printed)")
    parser.add_argument("--timeout", type=float, default=60,
                        help="seconds one mutant may take before it counts as a hang")
    parser.add_argument("--corpus", type=pathlib.Path, default=CORPUS)
    parser.add_argument("--out", type=pathlib.Path, help="where findings go (default: a new temporary folder)")
    parser.add_argument("--replay", type=pathlib.Path, help="compile one mutant here and print its outcome")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker()
    if args.replay:
        result = run_mutant(args.replay)
        print(json.dumps(result))
        return 1 if result["outcome"] in FINDINGS else 0
    return fuzz(args)


if __name__ == "__main__":
    sys.exit(main())

"""Regenerates the compile fuzzer's seed corpus, tests/fuzz/corpus/compile/:
every kernel of tests/error/*.py, the golden kernels (tests/golden/kernels/,
whole files as the command line reads them, factories evaluated by the core),
and every kernel the Python tests compile (those of tests/python/*.py,
python/tilec/ops/*.py and examples/*.py, with the bindings, target and arch
each was compiled with), as fuzz inputs (tests/fuzz/fuzz_input.h).

    .venv/bin/python tests/fuzz/make_corpus.py     # runs the Python tests (minutes)

Run it when the tests gain kernels; commit the result.
"""

import argparse
import hashlib
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import textwrap

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fuzz" / "corpus" / "compile"

# The tests compile one kernel source many times (factories over shapes and
# dtypes, every kernel again for each arch): the corpus keeps this many
# binding sets of each source per target and arch, the first ones recorded.
VARIANTS_PER_TARGET = {("cpu", ""): 2, ("cuda", "sm_80"): 1, ("cuda", "sm_90a"): 1}


class Unwritable(Exception):
    """A recorded value the input format has no spelling for."""


def quoted(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace(
        "\t", "\\t") + '"'


def word(text):
    """`text` as a WORD of the format (letters, digits, _ and .)."""
    return re.sub(r"[^A-Za-z0-9_.]", "_", text) or "_"


class Input:
    """One fuzz input being written: the main function's source, the
    functions it binds (appended to the file) and the header's bindings."""

    def __init__(self, source, name):
        self.sources = [textwrap.dedent(source)]
        self.defined = {name}
        self.bindings = {}

    def value(self, tagged):
        tag, payload = tagged
        if tag == "none":
            return "None"
        if tag == "bool":
            return "True" if payload else "False"
        if tag == "int":
            return str(payload)
        if tag == "float":
            if math.isnan(payload):
                raise Unwritable("nan")
            if math.isinf(payload):
                return "1e999" if payload > 0 else "-1e999"
            return repr(payload)
        if tag == "str":
            return quoted(payload)
        if tag == "dtype":
            return word(payload)
        if tag == "symbolic":
            return f"sym({word(payload[0])})"
        if tag == "symbolic_arith":
            op, left, right = payload
            name = {"+": "add", "-": "sub", "*": "mul", "//": "floordiv", "%": "mod"}[op]
            return f"arith({name}, {self.value(left)}, {self.value(right)})"
        if tag in ("module", "opaque"):
            return f"{tag}({word(payload)})"
        if tag == "host":  # a Python object the core calls into: the fuzzer has no Python
            # (recorded as itself where JSON can write it, else as "<its type's name>")
            name = payload.strip("<>") if isinstance(payload, str) else type(payload).__qualname__
            return f"opaque({word(name)})"
        if tag in ("tuple", "list"):
            items = ", ".join(self.value(item) for item in payload)
            return f"({items})" if tag == "tuple" else f"[{items}]"
        if tag == "tensor_spec":
            shape, dtype = payload
            return "tensor(" + ", ".join([word(dtype), *map(str, shape)]) + ")"
        if tag == "function":
            source, _filename, _first_line, name, bindings = payload
            if name not in self.defined:
                self.defined.add(name)
                self.sources.append(textwrap.dedent(source))
                self.bind(bindings)
            return f"func({word(name)})"
        raise Unwritable(tag)

    def bind(self, bindings):
        for name, tagged in sorted(bindings.items()):
            if name not in self.bindings:
                self.bindings[name] = None  # claimed before a function value recurses
                self.bindings[name] = self.value(tagged)

    def text(self, header):
        lines = header + [f"#!bind {name} = {value}" for name, value in self.bindings.items()]
        return "\n".join(lines) + "\n" + "\n\n".join(s.rstrip() + "\n" for s in self.sources)


def recorded_input(call):
    header = []
    if call["target"] != "cpu":
        header.append(f"#!target {call['target']} {call['arch']}".rstrip())
    header.append(f"#!func {call['name']}")
    header += [f"#!config {key}={value}" for key, value in sorted(call["pass_configs"].items())]
    written = Input(call["source"], call["name"])
    written.bind(call["bindings"])
    return written.text(header)


def record_test_compiles():
    """The compile calls of a run of the Python tests."""
    with tempfile.TemporaryDirectory() as tmp:
        record = pathlib.Path(tmp) / "calls.jsonl"
        env = dict(os.environ, TILEC_FUZZ_RECORD=str(record),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "tests" / "fuzz"),
                                                            os.environ.get("PYTHONPATH")])))
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "record_compiles",
                        str(ROOT / "tests" / "python")], env=env, cwd=ROOT, check=False)
        return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]


def golden_inputs():
    """The golden kernels as the command line compiles them: the file (or the
    one its "# source:" names) with its "# defines:" as bindings, for each target."""
    inputs = {}
    for path in sorted((ROOT / "tests" / "golden" / "kernels").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        header = dict(re.findall(r"^# (\w+): (.*)$", text, re.M))
        source = (ROOT / header["source"]).read_text(encoding="utf-8") if "source" in header else text
        binds = []
        for define in header.get("defines", "").split():
            name, value = define.split("=", 1)
            binds.append(f"#!bind {name} = {define_value(value)}")
        for target, suffix in (("", "cpu"), ("#!target cuda sm_90a\n", "cuda")):
            lines = target + f"#!func {header['func']}\n" + "".join(b + "\n" for b in binds)
            inputs[f"golden_{path.stem}_{suffix}.py"] = lines + source
    return inputs


def define_value(text):
    """A -D value (parse_define_value's reading) in the input format."""
    if re.fullmatch(r"-?\d+(\.\d*)?([eE][-+]?\d+)?|True|False|None", text):
        return text
    return quoted(text)


def stem(path_text):
    return pathlib.Path(path_text).stem


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=pathlib.Path,
                        help="use the calls a recording run wrote (record_compiles.py) "
                             "instead of running the tests")
    args = parser.parse_args()
    calls = ([json.loads(line) for line in args.calls.read_text(encoding="utf-8").splitlines()]
             if args.calls else record_test_compiles())

    inputs = {}  # file name -> text
    for path in sorted((ROOT / "tests" / "error").glob("*.py")):
        inputs[f"error_{path.stem}.py"] = "#!func main\n" + path.read_text(encoding="utf-8")
    inputs.update(golden_inputs())
    skipped = 0
    variants = {}  # (source, target, arch) -> how many are kept
    for call in calls:
        key = (call["source"], call["target"], call["arch"])
        if variants.get(key, 0) >= VARIANTS_PER_TARGET.get(key[1:], 1):
            continue
        variants[key] = variants.get(key, 0) + 1
        try:
            text = recorded_input(call)
        except Unwritable:
            skipped += 1
            continue
        digest = hashlib.sha1(text.encode()).hexdigest()[:10]
        inputs[f"{stem(call['filename'])}_{word(call['name'])}_{digest}.py"] = text

    CORPUS.mkdir(parents=True, exist_ok=True)
    for old in CORPUS.glob("*.py"):
        if not old.name.startswith("hand_"):  # written by hand (tests/fuzz/README.md)
            old.unlink()
    seen = set()
    for name, text in sorted(inputs.items()):
        if text in seen:
            continue
        seen.add(text)
        (CORPUS / name).write_text(text, encoding="utf-8")
    size = sum(p.stat().st_size for p in CORPUS.glob("*.py"))
    print(f"{len(seen)} inputs, {size // 1024} KiB in {CORPUS.relative_to(ROOT)} "
          f"(of {len(calls)} compile calls recorded; {skipped} with values the format can't write)")


if __name__ == "__main__":
    main()

"""Groups the compile fuzzer's findings by their failure signature: runs each
input once through the fuzzer binary (build-fuzz/tilec_compile_fuzzer) and
prints, per signature, how many inputs have it, the smallest of them, and the
innermost frame in src/ where it fails.

    python3 tests/fuzz/triage.py build-fuzz/findings/compile/*
    python3 tests/fuzz/triage.py --pending                # regressions/compile/pending/
    python3 tests/fuzz/triage.py --pending --signatures   # their signatures, one a line
    python3 tests/fuzz/triage.py --known FILE INPUTS...   # exit status 1 if one is new

A signature is the harness's (fuzz_input.h's failure_signature) for a
failure the harness catches, and the sanitizer's summary with the innermost
frame in src/ for a crash.
"""

import argparse
import collections
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
FUZZER = ROOT / "build-fuzz" / "tilec_compile_fuzzer"
PENDING = ROOT / "tests" / "fuzz" / "regressions" / "compile" / "pending"


def normalized(text):
    text = text.replace(str(ROOT) + "/", "")
    text = re.sub(r"'[^']*'", "'_'", text)
    return re.sub(r"\d[0-9a-fA-F]*", "N", text)


def project_frames(output):
    """The stack frames in src/, innermost first, as "function (file)"."""
    frames = []
    for line in output.splitlines():
        match = re.search(r"#\d+ 0x[0-9a-f]+ in (.*?) " + re.escape(str(ROOT)) + r"/(src/\S+)", line)
        if match:
            function = re.sub(r"\(.*", "", match.group(1).replace("(anonymous namespace)::", ""))
            file = re.sub(r":\d+(:\d+)?$", "", match.group(2))
            frames.append(f"{function} ({file})")
    return frames


def innermost_project_frame(output):
    frames = project_frames(output)
    return frames[0] if frames else "no frame in src/"


def failure_of(path, timeout):
    """(signature, innermost frame in src/), or None when the input passes."""
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:symbolize=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    env.pop("TILEC_FUZZ_KNOWN_FAILURES", None)
    env.pop("LSAN_OPTIONS", None)  # a pending leak's input shows its leak
    try:
        done = subprocess.run([str(FUZZER), f"-timeout={timeout}", "-rss_limit_mb=4096", str(path)],
                              capture_output=True, text=True, errors="replace", env=env,
                              timeout=timeout * 4)
    except subprocess.TimeoutExpired:
        return "hang past the fuzzer's own timeout", "unknown"
    if done.returncode == 0:
        return None
    out = done.stderr
    frame = innermost_project_frame(out)
    reported = re.search(r"^tilec compile fuzzer signature: (.*)$", out, re.M)
    if reported:
        return reported.group(1), frame
    if "libFuzzer: timeout" in out:
        return f"timeout at {frame}", frame
    if "out-of-memory" in out:
        return f"out of memory at {frame}", frame
    if "LeakSanitizer: detected memory leaks" in out:
        return f"memory leak allocated at {frame}", frame
    if "AddressSanitizer: stack-overflow" in out:
        # Where the stack ran out varies; the recursion is the frame it repeats most.
        frames = project_frames(out)
        recursion = max(set(frames), key=lambda f: (frames.count(f), f)) if frames else "no frame in src/"
        return f"stack overflow recursing in {recursion}", recursion
    summary = re.search(r"^SUMMARY: (\S+): (\S+)", out, re.M)
    kind = f"{summary.group(1)}: {summary.group(2)}" if summary else f"exit status {done.returncode}"
    detail = re.search(r"runtime error: (.*)$", out, re.M)
    if detail:
        kind += ": " + detail.group(1)[:120]
    return normalized(f"{kind} at {frame}"), frame


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="*", type=pathlib.Path)
    parser.add_argument("--pending", action="store_true", help="triage regressions/compile/pending/ too")
    parser.add_argument("--signatures", action="store_true",
                        help="print only the signatures of the failing inputs, one a line")
    parser.add_argument("--known", type=pathlib.Path,
                        help="a file of known signatures: exit status 1 when an input fails otherwise")
    parser.add_argument("--timeout", type=int, default=25)
    args = parser.parse_args()
    if not FUZZER.exists():
        sys.exit(f"triage: {FUZZER.relative_to(ROOT)} is missing: ./scripts/fuzz.sh sanitize builds it")
    inputs = list(args.inputs) + (sorted(PENDING.glob("*.py")) if args.pending else [])
    known = set(args.known.read_text(encoding="utf-8").splitlines()) if args.known else set()
    groups = collections.defaultdict(list)
    passing = []
    for path in inputs:
        failure = failure_of(path, args.timeout)
        if failure is None:
            passing.append(path)
        else:
            groups[failure].append(path)
    if args.signatures:
        for signature in sorted({signature for signature, _ in groups}):
            print(signature)
        return 0
    new = 0
    for (signature, frame), paths in sorted(groups.items(), key=lambda item: -len(item[1])):
        smallest = min(paths, key=lambda p: p.stat().st_size)
        status = "known" if signature in known else "NEW"
        new += signature not in known
        print(f"{len(paths):4d} {status:5s} {signature}\n           at {frame}\n           e.g. {smallest}")
    if passing:
        print(f"{len(passing):4d} pass: " + " ".join(str(p) for p in passing[:20]))
    return 1 if args.known and new else 0


if __name__ == "__main__":
    sys.exit(main())

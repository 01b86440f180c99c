#!/usr/bin/env bash
# The wheels bench/tilelang_same_source.py needs on the GPU machine (Python 3.12, torch, numpy,
# psutil, tqdm, cloudpickle, ml-dtypes and typing-extensions already there, no internet), made
# small enough to travel in one device call (64 MiB with the working tree):
#
#   bench/tilelang_wheels.sh [DIR]        # DIR defaults to .whl in the repository root
#
# tilelang 0.1.15 (the version issue 13 measured) and the three of its requirements the machine
# lacks: apache-tvm-ffi (>=0.1.11,<0.1.13), torch-c-dlpack-ext, z3-solver (>=4.13,<4.15.5).
# Two wheels are repacked, dropping only files nothing reads at run time:
#   z3-solver: the z3 command-line program (z3_solver-*.data/data/bin/z3) and libz3.so.4.15, a
#     byte-identical copy of libz3.so. tilelang's __init__ loads z3/lib/libz3.so with
#     RTLD_GLOBAL before TVM, and that file's SONAME is libz3.so.4.15, so libtvm_compiler.so's
#     NEEDED libz3.so.4.15 resolves to the copy already loaded (z3's own Python also opens
#     libz3.so).
#   tilelang: the C++ translation units (*.cc, *.cpp) under tilelang/src and
#     tilelang/3rdparty/tvm/src, the sources of the shared libraries it ships; the headers there
#     (tilelang/src is the include path of the kernels it compiles) stay.
# Each dropped file's line leaves the wheel's RECORD too, so pip installs it without complaint.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${1:-$ROOT/.whl}
mkdir -p "$DIR"
download=$(mktemp -d)
trap 'rm -rf "$download"' EXIT
platforms=()
for p in manylinux_2_35 manylinux_2_34 manylinux_2_31 manylinux_2_28 manylinux_2_27 manylinux_2_24 \
         manylinux_2_17 manylinux2014 manylinux1; do
  platforms+=(--platform "${p}_x86_64")
done
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  "${platforms[@]}" -d "$download" \
  tilelang==0.1.15 "apache-tvm-ffi>=0.1.11,<0.1.13" torch-c-dlpack-ext "z3-solver>=4.13.0,<4.15.5"

# repack WHEEL OUT PYTHON_PREDICATE: copies WHEEL to OUT without the members whose name (a
# str `name`) makes the predicate true, and without their RECORD lines.
repack() {
  python3 - "$1" "$2" "$3" <<'PY'
import csv, io, sys, zipfile
source, target, predicate = sys.argv[1], sys.argv[2], sys.argv[3]
drop = lambda name: eval(predicate, {}, {"name": name})
dropped = 0
with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
    for info in zin.infolist():
        if drop(info.filename):
            dropped += 1
            continue
        data = zin.read(info)
        if info.filename.endswith(".dist-info/RECORD"):
            rows = [r for r in csv.reader(io.StringIO(data.decode())) if r and not drop(r[0])]
            out = io.StringIO()
            csv.writer(out, lineterminator="\n").writerows(rows)
            data = out.getvalue().encode()
        zout.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
print(f"{target}: {dropped} files dropped")
PY
}

rm -f "$DIR"/tilelang-*.whl "$DIR"/apache_tvm_ffi-*.whl "$DIR"/torch_c_dlpack_ext-*.whl "$DIR"/z3_solver-*.whl
for wheel in "$download"/*.whl; do
  name=$(basename "$wheel")
  case $name in
    z3_solver-*) repack "$wheel" "$DIR/$name" \
      "name.endswith('.data/data/bin/z3') or name == 'z3/lib/libz3.so.4.15'" ;;
    tilelang-*) repack "$wheel" "$DIR/$name" \
      "name.startswith(('tilelang/src/', 'tilelang/3rdparty/tvm/src/')) and name.endswith(('.cc', '.cpp'))" ;;
    *) cp "$wheel" "$DIR/" ;;
  esac
done
ls -l "$DIR"
du -cb "$DIR"/*.whl | tail -1

#!/usr/bin/env bash
# The wheels of flash-linear-attention's `fla` module, which four of TileLang's example programs
# import as their reference (deepseek_nsa/example_tilelang_nsa_bwd.py and
# example_tilelang_nsa_fwd_varlen.py: fla.ops.utils.prepare_token_indices and fla.utils'
# autocast_custom_fwd/bwd and contiguous; linear_attention/example_linear_attn_fwd.py and
# example_linear_attn_bwd.py: fla.ops.linear_attn.fused_chunk_linear_attn and
# fla.modules.l2norm.l2norm_fwd), for the GPU machine (Python 3.12, torch 2.11, triton 3.6,
# einops and packaging already there, no internet):
#
#   bench/fla_wheels.sh [DIR]        # DIR defaults to .whl in the repository root
#
# The wheel is fla-core 0.6.0 alone, pure Python (py3-none-any, about 1 MiB). It holds fla/
# with ops/, modules/ and utils/, and needs einops (and torch and triton, which it imports). The
# flash-linear-attention wheel of the same version adds only fla/layers and fla/models (and
# requires transformers); fla/__init__.py imports those when they are there and goes on
# without them, and no example program uses them. Install it on the device the way
# bench/tilelang_same_source.py installs .whl/:
#   python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-*.whl
# fla 0.6.0 needs triton 3.3 or later (its autotuner passes do_bench): with an older triton,
# `import fla` works and importing fla.ops fails. With it and triton 3.6 on a CPU-only torch,
# the four programs import everything and stop at their first GPU use (needs-gpu in
# bench/tilelang_conformance.py). flash_attn, which five programs import (flash_attention's
# example_mha_fwd_varlen.py and example_gqa_fwd_varlen.py, three of blocksparse_attention's
# sparse GQA decodes), has no wheel on PyPI (source only: its build compiles CUDA code or downloads a wheel
# from GitHub), so nothing here can carry it.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${1:-$ROOT/.whl}
mkdir -p "$DIR"
rm -f "$DIR"/fla_core-*.whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  -d "$DIR" fla-core==0.6.0
ls -l "$DIR"/fla_core-*.whl
du -cb "$DIR"/*.whl | tail -1

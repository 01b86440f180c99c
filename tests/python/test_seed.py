"""The seed document's two kernels, run as written.

examples/seed_matmul.py and examples/seed_dsa_index.py are the seed's code
exactly, with only `import tilec as tilelang` and `import tilec.language as T`
added on top. The references below compute exactly what that code says,
block by block, including its index order.
"""

import importlib.util
import inspect
import pathlib

import numpy as np
import pytest

import tilec

from helpers import assert_close, jit, poison, rand, rng  # noqa: F401  (rng is a fixture)

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
HEADER = "import tilec as tilelang\nimport tilec.language as T\n\n"


def load_example(name):
    """Imports examples/<name>.py as written (its jit uses target='auto')."""
    path = EXAMPLES / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"tilec_example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def jit_for_test_target(name, func_name):
    """The example's function jitted for the target under test in the seed's
    own call form, `tilelang.jit(my_func, target=...)` (helpers.jit here).

    The file is executed with its `@tilelang.jit` line blanked (line numbers
    unchanged), which gives the plain function the decorator would receive;
    its source is still read from the example file.
    """
    path = EXAMPLES / f"{name}.py"
    lines = path.read_text(encoding="utf-8").split("\n")
    decorators = [i for i, text in enumerate(lines) if text.strip() == "@tilelang.jit"]
    assert len(decorators) == 1, f"{path}: expected one @tilelang.jit line"
    lines[decorators[0]] = ""
    namespace = {"__name__": f"tilec_example_{name}_plain", "__file__": str(path)}
    exec(compile("\n".join(lines), str(path), "exec"), namespace)
    func = namespace[func_name]
    assert inspect.isfunction(func)
    return jit(func)


# --- the matmul --------------------------------------------------------------------

def ceildiv(a, b):
    return -(-a // b)


def tile32(x, row, col):
    """A 32x32 block of x at (row, col), zero where it lies outside x."""
    out = np.zeros((32, 32))
    part = x[row:row + 32, col:col + 32]
    out[:part.shape[0], :part.shape[1]] = part
    return out


def seed_matmul_reference(a, b, M, N, K):
    """What the seed's matmul computes.

    Grid (ceildiv(M, 32), ceildiv(N, 32)) as (bx, by). For k in
    range(ceildiv(K, 32)): A_shared = A[by*32 : +32, k*32 : +32] and
    B_shared = B[bx*32 : +32, k*32 : +32] (zero outside the tensors), and
    C_local += A_shared @ B_shared. Then C[by*32 : +32, bx*32 : +32] = C_local,
    dropping what lies outside C. Elements no block writes stay NaN (the
    poison). Also returns the sum of |terms| of each element, for the tolerance.
    """
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    c = np.full((M, N), np.nan)
    scale = np.ones((M, N))
    for bx in range(ceildiv(M, 32)):
        for by in range(ceildiv(N, 32)):
            acc = np.zeros((32, 32))
            acc_abs = np.zeros((32, 32))
            for k in range(ceildiv(K, 32)):
                a_tile = tile32(a64, by * 32, k * 32)
                b_tile = tile32(b64, bx * 32, k * 32)
                acc += a_tile @ b_tile
                acc_abs += np.abs(a_tile) @ np.abs(b_tile)
            rows = slice(by * 32, min(by * 32 + 32, M))
            cols = slice(bx * 32, min(bx * 32 + 32, N))
            h, w = len(range(M)[rows]), len(range(N)[cols])
            c[rows, cols] = acc[:h, :w]
            scale[rows, cols] = acc_abs[:h, :w]
    return c, scale


def check_seed_matmul(kernel, M, N, K, rng):
    a = rand((M, K), "float32", rng)
    b = rand((K, N), "float32", rng)
    c = poison((M, N), "float32")
    assert kernel(a, b, c) is None
    expected, scale = seed_matmul_reference(a, b, M, N, K)
    assert_close(c, expected, "float32", scale=scale)


@pytest.fixture(scope="module")
def seed_matmul():
    return jit_for_test_target("seed_matmul", "matmul_kernel")


@pytest.mark.parametrize("size", [64, 96, 80, 32])
def test_seed_matmul_square(seed_matmul, size, rng):
    kernel = seed_matmul(size, size, size)
    assert isinstance(kernel, tilec.Kernel)
    check_seed_matmul(kernel, size, size, size, rng)


def test_seed_matmul_non_square_follows_the_code(seed_matmul, rng):
    # The code's index order leaves part of C unwritten when M != N.
    check_seed_matmul(seed_matmul(64, 96, 48), 64, 96, 48, rng)


def test_seed_matmul_kernel_is_cached(seed_matmul):
    assert seed_matmul(64, 64, 64) is seed_matmul(64, 64, 64)


# --- the DSA lightning indexer ---------------------------------------------------

def seed_dsa_reference(q, k):
    """scores[b, m, n] = score_frag[0], where score_frag = q[b, m] (h x d) @ k[b, n]
    (d): the gemv writes (doesn't accumulate), so scores[b, m, n] =
    sum_d q[b, m, 0, d] * k[b, n, d], computed from float16 in float32."""
    q64, k64 = q.astype(np.float64), k.astype(np.float64)
    scores = np.einsum("bmd,bnd->bmn", q64[:, :, 0, :], k64)
    scale = np.einsum("bmd,bnd->bmn", np.abs(q64[:, :, 0, :]), np.abs(k64))
    return scores, scale


def check_seed_dsa(kernel, b, m, n, h, d, rng):
    q = rand((b, m, h, d), "float16", rng)
    k = rand((b, n, d), "float16", rng)
    scores = poison((b, m, n), "float32")
    assert kernel(q, k, scores) is None
    expected, scale = seed_dsa_reference(q, k)
    assert_close(scores, expected, "float32", scale=scale, what=f"(b, m, n) = {(b, m, n)}")


@pytest.fixture(scope="module")
def seed_dsa():
    return jit_for_test_target("seed_dsa_index", "dsa_index_kernel")


def test_seed_dsa_index(seed_dsa, rng):
    kernel = seed_dsa(4, 16)
    assert isinstance(kernel, tilec.Kernel)
    check_seed_dsa(kernel, 2, 3, 5, 4, 16, rng)


def test_seed_dsa_index_symbolic_sizes_reuse_the_kernel(seed_dsa, rng):
    kernel = seed_dsa(4, 16)
    for b, m, n in [(2, 3, 5), (1, 4, 7), (3, 1, 1), (2, 6, 33)]:
        assert seed_dsa(4, 16) is kernel
        check_seed_dsa(kernel, b, m, n, 4, 16, rng)


def test_seed_dsa_index_other_head_shapes(seed_dsa, rng):
    check_seed_dsa(seed_dsa(1, 32), 2, 2, 3, 1, 32, rng)
    check_seed_dsa(seed_dsa(8, 64), 1, 2, 9, 8, 64, rng)


# --- the files as written --------------------------------------------------------

@pytest.mark.skipif(tilec._core.cuda_available(), reason="target='auto' picks cuda on this machine")
def test_examples_as_written_run_with_target_auto(rng):
    matmul = load_example("seed_matmul").matmul_kernel
    check_seed_matmul(matmul(64, 64, 64), 64, 64, 64, rng)
    dsa = load_example("seed_dsa_index").dsa_index_kernel
    check_seed_dsa(dsa(4, 16), 2, 3, 5, 4, 16, rng)


def find_seed_text():
    for root in [REPO / "shared", REPO.parent / "shared"]:
        for path in sorted((root / "seed").glob("000_*.txt")) if (root / "seed").is_dir() else []:
            return path.read_text(encoding="utf-8")
    return None


@pytest.mark.parametrize("name", ["seed_matmul", "seed_dsa_index"])
def test_examples_are_the_seeds_code(name):
    seed = find_seed_text()
    if seed is None:
        pytest.skip("the seed document is not in this checkout")
    text = (EXAMPLES / f"{name}.py").read_text(encoding="utf-8")
    assert text.startswith(HEADER)
    body = text[len(HEADER):]
    assert body.rstrip("\n") in seed, f"examples/{name}.py differs from the seed's code"

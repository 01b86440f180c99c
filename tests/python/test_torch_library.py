"""tilec inside torch models: a Kernel registered as a torch custom op (tilec.register_torch_op)
and tilec.ops as torch.ops.tilec.* (tilec.ops.torch_ops) compute what the kernels do, pass
torch.library.opcheck (schema, fake kernel, autograd registration), stay whole in a
torch.compile(fullgraph=True) graph, differentiate where they have backward kernels, and (on a
GPU) capture into a CUDA graph that replays on new inputs."""

import itertools
import ml_dtypes
import numpy as np
import pytest

import tilec
import tilec.language as T
from tilec import _core

from helpers import assert_close, poison, rand, rng  # noqa: F401  (rng: a fixture)

torch = pytest.importorskip("torch", reason="the torch integration needs torch")
opcheck = torch.library.opcheck

N = 1000


@tilec.jit(out_idx=[-1], target="cpu")
def scaled_add(n, block=128):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32"), scale: T.float32,
             C: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
            for i in T.Parallel(block):
                if bx * block + i < n:
                    C[bx * block + i] = A[bx * block + i] * scale + B[bx * block + i]

    return main


@tilec.jit(target="cpu")
def doubled_into(n, block=128):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
            for i in T.Parallel(block):
                if bx * block + i < n:
                    C[bx * block + i] = A[bx * block + i] * 2

    return main


@pytest.fixture(scope="module")
def ops():
    """The two kernels, as the ops tilec_test::scaled_add and tilec_test::doubled_into (once a
    process: torch keeps an op's definition)."""
    return (tilec.register_torch_op(scaled_add(N), "tilec_test::scaled_add"),
            tilec.register_torch_op(doubled_into(N), "tilec_test::doubled_into"))


def tensor(shape, dtype, rng, device="cpu"):
    return torch.from_numpy(rand(shape, dtype, rng)).to(device)


def test_a_registered_kernel_is_an_op_of_its_inputs_returning_its_outputs(ops, rng):
    scaled, _ = ops
    assert str(torch.ops.tilec_test.scaled_add.default._schema) == \
        "tilec_test::scaled_add(Tensor A, Tensor B, float scale) -> Tensor"
    a, b = tensor(N, "float32", rng), tensor(N, "float32", rng)
    c = scaled(a, b, 1.5)
    assert_close(c.numpy(), a.numpy().astype(np.float64) * 1.5 + b.numpy(), "float32")
    assert_close(torch.ops.tilec_test.scaled_add(a, b, -2.0).numpy(),
                 a.numpy().astype(np.float64) * -2.0 + b.numpy(), "float32")


def test_a_kernel_without_outputs_is_an_op_that_mutates_what_it_writes(ops, rng):
    _, doubled = ops
    assert str(torch.ops.tilec_test.doubled_into.default._schema) == \
        "tilec_test::doubled_into(Tensor A, Tensor(a1!) C) -> ()"
    a = tensor(N, "float32", rng)
    c = torch.from_numpy(poison(N, "float32"))
    assert doubled(a, c) is None
    assert_close(c.numpy(), a.numpy().astype(np.float64) * 2, "float32")


def test_registered_kernels_pass_opcheck(ops, rng):
    a, b = tensor(N, "float32", rng), tensor(N, "float32", rng)
    opcheck(torch.ops.tilec_test.scaled_add.default, (a, b, 0.5))
    opcheck(torch.ops.tilec_test.doubled_into.default, (a, torch.from_numpy(poison(N, "float32"))))


def graph_ops(function, *args):
    """The ops of the one graph torch.compile(fullgraph=True) makes of `function` (which
    fails on a graph break), and its result."""
    graphs = []

    def backend(graph_module, example_inputs):
        graphs.append(graph_module)
        return graph_module.forward

    result = torch.compile(function, fullgraph=True, backend=backend)(*args)
    assert len(graphs) == 1
    # Dynamo records an op as its packet (torch.ops.ns.op), AOT tracing as an overload.
    return {getattr(node.target, "overloadpacket", node.target) for node in graphs[0].graph.nodes
            if node.op == "call_function"}, result


def test_a_registered_kernel_stays_whole_in_a_fullgraph_compile(ops, rng):
    scaled, _ = ops
    a, b = tensor(N, "float32", rng), tensor(N, "float32", rng)
    targets, c = graph_ops(lambda a, b: torch.relu(scaled(a, b, 3.0)) + 1, a, b)
    assert torch.ops.tilec_test.scaled_add in targets
    assert_close(c.numpy(), np.maximum(a.numpy().astype(np.float64) * 3 + b.numpy(), 0) + 1, "float32")


def test_register_torch_op_names_what_is_wrong():
    with pytest.raises(TypeError, match="takes a tilec.Kernel, not function"):
        tilec.register_torch_op(lambda x: x, "tilec_test::f")
    with pytest.raises(ValueError, match="name must be 'namespace::op'"):
        tilec.register_torch_op(scaled_add(8), "no_namespace")
    with pytest.raises(ValueError, match="name must be 'namespace::op'"):
        tilec.register_torch_op(scaled_add(8), "tilec_test::bad-name")

    @tilec.jit(out_idx=[-1], target="cpu")
    def filled(n):
        @T.prim_func
        def main(value: T.float32, Out: T.Tensor((n,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                for i in T.serial(n):
                    Out[i] = value

        return main

    with pytest.raises(ValueError, match="main has no tensor input"):
        tilec.register_torch_op(filled(8), "tilec_test::filled")


def test_output_shapes_come_from_the_inputs_shapes_alone():
    @tilec.jit(out_idx=[-1], target="cpu")
    def transpose_pairs(block=32):
        m, n = T.symbolic("m"), T.symbolic("n")

        @T.prim_func
        def main(A: T.Tensor((m, n), "float32"), B: T.Tensor((n, m * 2), "float32")):
            with T.Kernel(1, threads=32) as bx:
                for i in T.serial(m):
                    for j in T.serial(n):
                        B[j, 2 * i] = A[i, j]
                        B[j, 2 * i + 1] = A[i, j]

        return main

    kernel = transpose_pairs()
    assert kernel.output_shapes_of([[3, 5], None]) == [(5, 6)]
    with pytest.raises(ValueError, match="argument 'A' has 1 dims"):
        kernel.output_shapes_of([[15], None])


@tilec.jit(out_idx=[1, 2], target="cpu")
def doubled_and_pair_sums(block=64):
    n = T.symbolic("n")

    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), Doubled: T.Tensor((n,), "float32"),
             PairSums: T.Tensor((T.ceildiv(n, 2),), "float32")):
        with T.Kernel(T.ceildiv(n, block), threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < n:
                    Doubled[bx * block + i] = A[bx * block + i] * 2
                    if (bx * block + i) % 2 == 0:
                        PairSums[(bx * block + i) // 2] = A[bx * block + i] + T.if_then_else(
                            bx * block + i + 1 < n, A[T.min(bx * block + i + 1, n - 1)], 0.0)

    return main


def test_symbolic_dims_stay_symbolic_in_a_dynamic_compile(rng):
    """Output dims that are expressions of the inputs' symbolic dims (n, (n + 1) // 2) are traced
    as such: one graph serves every n, with no recompile for a new size."""
    op = tilec.register_torch_op(doubled_and_pair_sums(), "tilec_test::doubled_and_pair_sums")
    graphs = []

    def backend(graph_module, example_inputs):
        graphs.append(graph_module)
        return graph_module.forward

    torch._dynamo.reset()
    compiled = torch.compile(lambda a: op(a), backend=backend, fullgraph=True, dynamic=True)
    for n in (37, 64, 101):
        a = tensor(n, "float32", rng)
        doubled, pair_sums = compiled(a)
        padded = torch.cat([a, a.new_zeros(n % 2)])
        torch.testing.assert_close(doubled, a * 2)
        torch.testing.assert_close(pair_sums, padded[0::2] + padded[1::2])
    assert len(graphs) == 1


def test_output_dim_expressions_evaluate_over_the_inputs_sizes():
    from tilec.torch_library import _dim_size

    assert _dim_size(3, {}) == 3
    assert _dim_size("(m + 64 - 1) // 64", {"m": 130}) == 3
    assert _dim_size("n * 2 - m % 4", {"n": 5, "m": 7}) == 7
    assert _dim_size("-n + 9", {"n": 2}) == 7
    for text in ("k * 2", "min(n, 4)", "n / 2", "n +", "2.5", "n ** 2"):
        assert _dim_size(text, {"n": 8}) is None, text


# tilec.ops as torch.ops.tilec.*

@pytest.fixture(scope="module")
def library():
    from tilec.ops import torch_ops  # noqa: F401  (registers torch.ops.tilec.*)

    return torch.ops.tilec


def test_the_library_gemm_op_multiplies_and_passes_opcheck(library, rng):
    a, b = (torch.from_numpy(rand(shape, "float32", rng)).to(torch.bfloat16) for shape in ((64, 96), (96, 80)))
    expected = a.double() @ b.double()
    assert_close(library.gemm(a, b).view(torch.int16).numpy().view(ml_dtypes.bfloat16), expected.numpy(), "bfloat16",
                 scale=(a.double().abs() @ b.double().abs()).numpy())
    opcheck(library.gemm.default, (a, b))


def attention_inputs(rng, requires_grad=False):
    """q [1, 70, 2, 64] and k, v [1, 90, 2, 64], float16."""
    q, k, v = (tensor(shape, "float16", rng) for shape in ((1, 70, 2, 64), (1, 90, 2, 64), (1, 90, 2, 64)))
    return [t.requires_grad_(requires_grad) for t in (q, k, v)]


def attention_reference(q, k, v):
    """Causal (bottom-right) attention in float64, and its inputs as float64 leaves."""
    q64, k64, v64 = (t.detach().double().requires_grad_() for t in (q, k, v))
    scores = torch.einsum("bshd,bthd->bhst", q64, k64) / 8.0
    keep = torch.ones(q.shape[1], k.shape[1], dtype=torch.bool).tril(k.shape[1] - q.shape[1])
    out = torch.einsum("bhst,bthd->bshd", scores.masked_fill(~keep, -torch.inf).softmax(-1), v64)
    return out, (q64, k64, v64)


def test_the_library_attention_op_is_differentiable(library, rng):
    q, k, v = attention_inputs(rng, requires_grad=True)
    out, lse = library.flash_attention(q, k, v, True)
    assert tuple(lse.shape) == (1, 2, 70) and not lse.requires_grad
    expected, leaves = attention_reference(q, k, v)
    assert_close(out.detach().numpy(), expected.detach().numpy(), "float16")
    dout = torch.from_numpy(rand(out.shape, "float16", rng))
    out.backward(dout)
    expected.backward(dout.double())
    for name, t, leaf in zip("qkv", (q, k, v), leaves):
        assert_close(t.grad.numpy(), leaf.grad.numpy(), "float16", scale=leaf.grad.abs().max().item(),
                     what=f"d{name}")


def test_the_library_attention_op_passes_opcheck_and_stays_whole_in_a_fullgraph_compile(library, rng):
    q, k, v = attention_inputs(rng)
    opcheck(library.flash_attention.default, (q, k, v, True))
    targets, out = graph_ops(lambda q, k, v: library.flash_attention(q, k, v, True)[0] * 2, q, k, v)
    assert library.flash_attention in targets
    expected, _ = attention_reference(q, k, v)
    assert_close(out.numpy(), 2 * expected.detach().numpy(), "float16")


@pytest.mark.gpu
@pytest.mark.skipif(not _core.cuda_available(), reason="needs a CUDA GPU")
def test_registered_ops_capture_into_a_cuda_graph_and_replay_on_new_inputs(rng):
    from tilec.ops import torch_ops  # noqa: F401

    op = tilec.register_torch_op(tilec.jit(scaled_add.__wrapped__, out_idx=[-1], target="cuda")(N),
                                 "tilec_test::scaled_add_cuda")
    a, b = tensor(N, "float32", rng, "cuda"), tensor(N, "float32", rng, "cuda")
    x, y = tensor((128, 64), "float16", rng, "cuda"), tensor((64, 96), "float16", rng, "cuda")
    q, k, v = (t.cuda() for t in attention_inputs(rng))
    for _ in range(2):  # compiled and warm before capture
        op(a, b, 2.0), torch.ops.tilec.gemm(x, y), torch.ops.tilec.flash_attention(q, k, v, True)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        c = op(a, b, 2.0)
        z = torch.ops.tilec.gemm(x, y)
        out, _ = torch.ops.tilec.flash_attention(q, k, v, True)
    for t in (a, b, x, y, q, k, v):
        t.copy_(torch.from_numpy(rand(tuple(t.shape), "float16" if t.dtype == torch.float16 else "float32",
                                      rng)).cuda())
    graph.replay()
    torch.cuda.synchronize()
    assert_close(c.cpu().numpy(), a.double().cpu().numpy() * 2 + b.cpu().numpy(), "float32")
    assert_close(z.cpu().numpy(), (x.double() @ y.double()).cpu().numpy(), "float16",
                 scale=(x.double().abs() @ y.double().abs()).cpu().numpy())
    expected, _ = attention_reference(q.cpu(), k.cpu(), v.cpu())
    assert_close(out.cpu().numpy(), expected.detach().numpy(), "float16")


@pytest.mark.gpu
@pytest.mark.skipif(not _core.cuda_available(), reason="needs a CUDA GPU")
def test_the_varlen_ops_capture_into_a_cuda_graph_and_replay_on_new_inputs(rng):
    """The varlen pair read no offsets on the host: forward and backward capture, and a replay on
    new values (offsets included) matches eager calls."""
    from tilec.ops import torch_ops  # noqa: F401

    def inputs(lengths_q, lengths_k):
        q, dout = (tensor((100, 2, 64), "float16", rng, "cuda") for _ in range(2))
        k, v = (tensor((120, 2, 64), "float16", rng, "cuda") for _ in range(2))
        cu_q, cu_k = (torch.tensor([0, *itertools.accumulate(n)], dtype=torch.int32, device="cuda")
                      for n in (lengths_q, lengths_k))
        return q, k, v, dout, cu_q, cu_k

    def step(q, k, v, dout, cu_q, cu_k):
        out, lse = torch.ops.tilec.flash_attention_varlen(q, k, v, cu_q, cu_k, 64, True, None, 64)
        grads = torch.ops.tilec.flash_attention_varlen_backward(q, k, v, out, lse, dout, cu_q, cu_k, 64, True,
                                                                None, 64)
        return out, lse, *grads

    static = inputs((30, 50), (40, 60))
    for _ in range(2):  # compiled and warm before capture
        step(*static)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        results = step(*static)
    fresh = inputs((64, 20), (50, 64))  # other lengths, and rows past the last sequence
    for t, value in zip(static, fresh):
        t.copy_(value)
    graph.replay()
    torch.cuda.synchronize()
    for name, replayed, eager in zip(("out", "lse", "dq", "dk", "dv"), results, step(*fresh)):
        if name == "dq":  # summed by atomics, in no fixed order
            torch.testing.assert_close(replayed, eager, rtol=2e-3, atol=2e-3 * eager.abs().max().item())
        else:
            assert torch.equal(replayed, eager), name


def test_torch_tensors_take_the_one_call_path_and_others_the_general_one(ops, rng):
    """torch tensors go through CoreKernel.call (DLPack's C exchange API: no Python-level
    conversions); numpy arrays, which lack it, through Kernel.run; both give the same."""
    if getattr(torch.Tensor, "__dlpack_c_exchange_api__", None) is None:
        pytest.skip(f"torch {torch.__version__} has no DLPack C exchange API (torch 2.10+)")
    kernel = scaled_add(N)
    a, b = tensor(N, "float32", rng), tensor(N, "float32", rng)
    c = kernel._core.call((a, b, 0.25), [3])
    assert isinstance(c, torch.Tensor)
    assert_close(c.numpy(), a.numpy().astype(np.float64) * 0.25 + b.numpy(), "float32")
    assert kernel._core.call((a.numpy(), b.numpy(), 0.25), [3]) is NotImplemented
    assert_close(kernel(a.numpy(), b.numpy(), 0.25), c.numpy(), "float32", exact=True)
    poisoned = torch.from_numpy(poison(N, "float32"))
    assert kernel._core.call((a, b, 0.25, poisoned), []) is None
    assert_close(poisoned.numpy(), c.numpy(), "float32", exact=True)
    with pytest.raises(ValueError, match="output 2 is no tensor param"):
        kernel._core.call((a, b, c), [2])
    with pytest.raises(ValueError, match="takes 3 arguments besides its 1 outputs; got 2"):
        kernel._core.call((a, b), [3])


@tilec.jit(out_idx=[-1], target="cpu")
def doubled_through_scratch(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), Out: T.Tensor((n,), "float32")):
        scratch = T.alloc_global((n,), "float32")
        with T.Kernel(1, threads=32) as bx:
            for i in T.serial(n):
                scratch[i] = A[i] * 2
        with T.Kernel(1, threads=32) as bx:
            for i in T.serial(n):
                Out[i] = scratch[i] + 1

    return main


def test_a_kernels_scratch_tensors_are_allocated_like_its_outputs(rng):
    """T.alloc_global's workspaces come from torch's allocator on the one-call path, and the
    registered op's fake kernel leaves them out."""
    kernel = doubled_through_scratch(N)
    a = tensor(N, "float32", rng)
    out = kernel._core.call((a,), [1])
    assert out is not NotImplemented
    assert_close(out.numpy(), a.numpy().astype(np.float64) * 2 + 1, "float32")
    op = tilec.register_torch_op(kernel, "tilec_test::doubled_through_scratch")
    assert str(torch.ops.tilec_test.doubled_through_scratch.default._schema) == \
        "tilec_test::doubled_through_scratch(Tensor A) -> Tensor"
    opcheck(torch.ops.tilec_test.doubled_through_scratch.default, (a,))
    assert_close(op(a).numpy(), out.numpy(), "float32", exact=True)


def test_the_library_fp8_ops_multiply_and_pass_opcheck(library, rng):
    # opcheck's schema test does arithmetic on the inputs, which torch has no float8 CPU kernels for.
    checks = ("test_faketensor", "test_autograd_registration", "test_aot_dispatch_dynamic")
    a8 = torch.from_numpy(rand((64, 128), "float32", rng)).to(torch.float8_e4m3fn)
    b8 = torch.from_numpy(rand((32, 128), "float32", rng)).to(torch.float8_e4m3fn)
    a, b = a8.double(), b8.double()
    c = library.fp8_matmul_bf16(a8, b8)
    assert c.dtype == torch.bfloat16 and tuple(c.shape) == (64, 32)
    assert_close(c.view(torch.int16).numpy().view(ml_dtypes.bfloat16), (a @ b.T).numpy(), "bfloat16",
                 scale=(a.abs() @ b.abs().T).numpy())
    opcheck(library.fp8_matmul_bf16.default, (a8, b8), test_utils=checks)
    a_scale = torch.from_numpy(rand((64, 1), "float32", rng, 0.5, 2.0))
    b_scale = torch.from_numpy(rand((1, 1), "float32", rng, 0.5, 2.0))
    scaled = library.fp8_gemm(a8, a_scale, b8, b_scale)
    expected = (a * a_scale.double()) @ (b * b_scale.double()).T
    assert_close(scaled.view(torch.int16).numpy().view(ml_dtypes.bfloat16), expected.numpy(), "bfloat16",
                 scale=(a.abs() * a_scale.double()) @ (b.abs() * b_scale.double()).T)
    opcheck(library.fp8_gemm.default, (a8, a_scale, b8, b_scale), test_utils=checks)


def test_the_library_varlen_attention_op_is_differentiable(library, rng):
    """Two sequences packed (30 and 40 queries over 50 and 40 keys), causal: each against its
    own float64 attention, out and gradients."""
    lengths_q, lengths_k = (30, 40), (50, 40)
    q, k, v = (tensor((sum(n), 2, 64), "float16", rng).requires_grad_()
               for n in (lengths_q, lengths_k, lengths_k))
    cu_q, cu_k = (torch.tensor([0, n[0], n[0] + n[1]], dtype=torch.int32) for n in (lengths_q, lengths_k))
    out, lse = library.flash_attention_varlen(q, k, v, cu_q, cu_k, max(lengths_q), True)
    assert tuple(lse.shape) == (2, sum(lengths_q)) and not lse.requires_grad
    dout = torch.from_numpy(rand(out.shape, "float16", rng))
    out.backward(dout)
    for s in range(2):
        rows, keys = slice(cu_q[s], cu_q[s + 1]), slice(cu_k[s], cu_k[s + 1])
        expected, leaves = attention_reference(q[rows][None], k[keys][None], v[keys][None])
        assert_close(out[rows].detach().numpy(), expected[0].detach().numpy(), "float16", what=f"out {s}")
        expected.backward(dout[rows][None].double())
        for name, t, leaf, part in zip("qkv", (q, k, v), leaves, (rows, keys, keys)):
            assert_close(t.grad[part].numpy(), leaf.grad[0].numpy(), "float16", scale=leaf.grad.abs().max().item(),
                         what=f"d{name} of sequence {s}")
    opcheck(library.flash_attention_varlen.default, (q.detach(), k.detach(), v.detach(), cu_q, cu_k, 40, True))

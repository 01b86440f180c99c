"""A compiled tilec Kernel as a torch custom op, so torch.compile keeps its calls in the graph.

    kernel = add(1024)                       # a tilec.Kernel (jit, out_idx=[-1])
    op = tilec.register_torch_op(kernel, "mylib::add")
    c = op(a, b)                             # also torch.ops.mylib.add(a, b)

The op takes the kernel's params but its outputs (out_idx), in order, and returns the outputs
(one Tensor, or a tuple). A tensor the kernel writes that is not an output is declared mutated
(Tensor(a!)), as torch.library requires. Its fake kernel sizes the outputs from the inputs'
shapes alone, so tracing needs no data and no launch: an output dim that is an expression of
symbolic dims the inputs have as whole dims is that expression of their sizes, which under
dynamic shapes stay symbolic (one graph serves every size); other outputs are sized by
Kernel.output_shapes_of, which needs the sizes as ints and so specializes them.
"""

import ast
import operator
import re

_OP_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*::[A-Za-z_][A-Za-z0-9_]*")


def register_torch_op(kernel, name):
    """Registers `kernel` (a tilec.Kernel) as the torch custom op `name` ("namespace::op") for
    CPU and CUDA tensors, with a fake kernel; returns the op (torch.ops.namespace.op)."""
    import torch  # noqa: PLC0415  (tilec needs torch only here)

    from .kernel import Kernel, _library_dtype  # noqa: PLC0415

    if not isinstance(kernel, Kernel):
        raise TypeError(f"register_torch_op takes a tilec.Kernel, not {type(kernel).__qualname__} "
                        f"(a jit function gives one when called with its compile-time arguments)")
    if not isinstance(name, str) or not _OP_NAME.fullmatch(name):
        raise ValueError(f"name must be 'namespace::op' (identifiers), not {name!r}")
    params, outputs = kernel.params, kernel.out_idx
    inputs = [i for i in range(len(params)) if i not in outputs]
    if outputs and not any(params[i].is_tensor for i in inputs):
        raise ValueError(f"{kernel.name} has no tensor input: an op's outputs go on its inputs' device, so "
                         f"register_torch_op needs one (or the kernel without out_idx, writing tensors passed in)")
    torch.library.define(name, _schema(params, inputs, outputs))
    output_dtypes = [_library_dtype("torch", params[i].dtype) for i in outputs]

    def run(*args):
        return kernel(*args)

    def fake(*args):
        tensors = [(params[i], arg) for i, arg in zip(inputs, args) if params[i].is_tensor]
        sizes = {}  # symbolic dim -> a tensor input's size that is that dim whole
        for param, arg in tensors:
            for text, size in zip(param.shape, arg.shape):
                if isinstance(text, str) and text.isidentifier():
                    sizes.setdefault(text, size)
        shapes = [[_dim_size(text, sizes) for text in params[i].shape] for i in outputs]
        if any(size is None for shape in shapes for size in shape):
            given = [None] * len(params)
            for i, arg in zip(inputs, args):
                if params[i].is_tensor:
                    given[i] = [int(d) for d in arg.shape]
            shapes = kernel.output_shapes_of(given)
        made = [torch.empty(shape, dtype=dtype, device=tensors[0][1].device)
                for shape, dtype in zip(shapes, output_dtypes)]
        if not outputs:
            return None
        return made[0] if len(made) == 1 else tuple(made)

    torch.library.impl(name, ("cpu", "cuda"), run)
    torch.library.register_fake(name, fake)
    namespace, _, op = name.partition("::")
    return getattr(getattr(torch.ops, namespace), op)


def _schema(params, inputs, outputs):
    """The op's schema: "(Tensor a, Tensor(a!) out, float scale) -> Tensor"."""
    arguments = []
    for i in inputs:
        p = params[i]
        if p.is_tensor:
            arguments.append(f"Tensor(a{i}!) {p.name}" if p.written else f"Tensor {p.name}")
        else:
            kind = "bool" if p.dtype == "bool" else "float" if p.dtype.startswith(("float", "bfloat")) else "int"
            arguments.append(f"{kind} {p.name}")
    returns = "()" if not outputs else "Tensor" if len(outputs) == 1 else \
        "(" + ", ".join(["Tensor"] * len(outputs)) + ")"
    return f"({', '.join(arguments)}) -> {returns}"


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
              ast.Mod: operator.mod}


def _dim_size(text, sizes):
    """The size of a dim whose expression is `text` (an int, or the text of an expression of
    symbolic dims, as ParamInfo.shape gives it) when `sizes` has each dim it names (ints or torch
    SymInts); None when it has not, or the expression is not arithmetic of those."""
    if isinstance(text, int):
        return text

    def evaluate(node):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name):
            return sizes.get(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            value = evaluate(node.operand)
            return None if value is None else -value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            left, right = evaluate(node.left), evaluate(node.right)
            return None if left is None or right is None else _OPERATORS[type(node.op)](left, right)
        return None

    try:
        return evaluate(ast.parse(text, mode="eval").body)
    except SyntaxError:
        return None

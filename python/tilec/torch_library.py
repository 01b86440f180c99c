"""A compiled tilec Kernel as a torch custom op, so torch.compile keeps its calls in the graph.

    kernel = add(1024)                       # a tilec.Kernel (jit, out_idx=[-1])
    op = tilec.register_torch_op(kernel, "mylib::add")
    c = op(a, b)                             # also torch.ops.mylib.add(a, b)

The op takes the kernel's params but its outputs (out_idx), in order, and returns the outputs
(one Tensor, or a tuple). A tensor the kernel writes that is not an output is declared mutated
(Tensor(a!)), as torch.library requires. Its fake kernel sizes the outputs from the inputs'
shapes alone (Kernel.output_shapes_of), so tracing needs no data and no launch.
"""

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
        shapes = [None] * len(params)
        for i, arg in zip(inputs, args):
            if params[i].is_tensor:
                shapes[i] = [int(d) for d in arg.shape]
        like = next(arg for i, arg in zip(inputs, args) if params[i].is_tensor)
        made = [torch.empty(shape, dtype=dtype, device=like.device)
                for shape, dtype in zip(kernel.output_shapes_of(shapes), output_dtypes)]
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

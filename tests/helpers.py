"""Helpers shared by the test modules: wrap a function as a module, compile, compare."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import torch

import mlirfuse
from mlirfuse.compiler import example_arguments
from mlirfuse.runtime.dryrun import launch_specializations


class Lambda(torch.nn.Module):
    """A module whose forward is `fn`: the smallest wrapper torch.export accepts."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


class LSTM(torch.nn.Module):
    """An LSTM unrolled with torch ops: gates.chunk(4) then sigmoid/tanh/mul/add."""

    def __init__(self, hidden: int = 16, steps: int = 3, inputs: int | None = None):
        super().__init__()
        self.steps = steps
        self.w_ih = torch.nn.Parameter(torch.randn(4 * hidden, inputs or hidden) * 0.1)
        self.w_hh = torch.nn.Parameter(torch.randn(4 * hidden, hidden) * 0.1)
        self.b = torch.nn.Parameter(torch.randn(4 * hidden) * 0.1)

    def forward(self, xs, h, c):
        for t in range(self.steps):
            gates = xs[t] @ self.w_ih.T + h @ self.w_hh.T + self.b
            i, f, g, o = gates.chunk(4, 1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
        return h, c


_TORCH_OP = re.compile(r"\btorch\.(?:aten|prims)\.[\w.]+|\btorch\.operator \"[\w.]+\"")


def gpu_launch_specializations(cm, model, arch: int) -> dict:
    """Kernel name -> what `triton.compile` takes for its launch on an sm_<arch> GPU (a dry run on meta tensors:
    strides of 1 and 16-divisible sizes specialized, as Triton's JIT and a package's cubins are): the cubin that
    runs, which `compile_kernels(..., specialized=...)` compiles; a kernel compiled for any arguments can differ
    (the f32 GEMMs with a residual spilled on sm_80 only as launched)."""
    specialized, stopped = launch_specializations(cm.program, cm.kernels, list(example_arguments(cm.imported, model)), arch)
    assert stopped is None, stopped
    return specialized


def split_mlir(text: str) -> tuple[str, str]:
    """(kernel bodies, forward function) of a compiled module's final IR."""
    kernels, _, forward = text.partition("func.func @forward")
    return kernels, forward


def unfused_ops(cm) -> list[str]:
    """The torch ops left in `forward`, i.e. those that run through ATen."""
    return _TORCH_OP.findall(split_mlir(cm.mlir)[1])


def kernel_ops(cm) -> list[str]:
    """The torch ops inside fusion.kernel bodies, i.e. those that run in Triton."""
    return _TORCH_OP.findall(split_mlir(cm.mlir)[0])


def assert_fully_fused(cm, op: str | None = None) -> None:
    """Every computing op became Triton: no ATen fallback, at least one launch, `op` in a kernel."""
    assert cm.stats["unfused_ops"] == 0, f"unfused ops: {unfused_ops(cm)}"
    assert cm.stats["launches"] >= 1, cm.stats
    if op is not None:
        # `op` may omit the overload: "torch.aten.add" matches "torch.aten.add.Scalar".
        found = kernel_ops(cm)
        assert any(k == op or k.startswith(op + ".") for k in found), f"{op} not in kernels: {found}"


def compile_and_compare(fn, inputs: tuple, *, op: str | None = None, fused: bool = True, **tolerances):
    """Compile `fn` as a module, run it, and compare with eager; returns the compiled module."""
    model = Lambda(fn)
    expected = model(*inputs)
    cm = mlirfuse.compile(model, inputs)
    actual = cm(*inputs)
    torch.testing.assert_close(actual, expected, **tolerances)
    if fused:
        assert_fully_fused(cm, op)
    return cm


def train_side_by_side(model, compile_fn, batches, *, lr: float = 0.05, **tolerances):
    """Train `model` eagerly and `compile_fn(copy)` side by side with SGD, one step per (input, target) batch.

    After every step the losses (MSE, computed eagerly) and every
    parameter's gradient must match eager's; at the end every buffer.
    Returns (eager model, compiled model's module).
    """
    import copy

    tolerances = tolerances or dict(rtol=1e-4, atol=1e-5)
    eager, ours = model, copy.deepcopy(model)
    compiled = compile_fn(ours)
    optimizers = [torch.optim.SGD(m.parameters(), lr=lr) for m in (eager, ours)]
    for step, (x, target) in enumerate(batches):
        losses = []
        for fn, optimizer in zip((eager, compiled), optimizers):
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(fn(x), target)
            loss.backward()
            losses.append(loss.detach())
        torch.testing.assert_close(losses[1], losses[0], **tolerances, msg=lambda m: f"step {step} loss: {m}")
        for (name, p), q in zip(eager.named_parameters(), ours.parameters()):
            torch.testing.assert_close(q.grad, p.grad, **tolerances, msg=lambda m, n=name: f"step {step} grad {n}: {m}")
        for optimizer in optimizers:
            optimizer.step()
    for (name, b), c in zip(eager.named_buffers(), ours.buffers()):
        torch.testing.assert_close(c, b, **tolerances, msg=lambda m, n=name: f"buffer {n}: {m}")
    return eager, ours


def dynamo_entry_points_dir(root: Path) -> Path:
    """A stand-in for an installed mlirfuse under `root`: a dist-info holding pyproject.toml's Dynamo entry points.

    Lets `backend="mlirfuse"` resolve through the real discovery mechanism
    (importlib.metadata) whether or not the installed package is current.
    """
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    entry_points = project["project"]["entry-points"]["torch_dynamo_backends"]
    dist = root / "mlirfuse_entry_point_check-0.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mlirfuse-entry-point-check\nVersion: 0\n")
    lines = "".join(f"{name} = {target}\n" for name, target in entry_points.items())
    (dist / "entry_points.txt").write_text("[torch_dynamo_backends]\n" + lines)
    return root


def discover_dynamo_backends(root: Path) -> None:
    """Make Dynamo (re)discover entry-point backends with `dynamo_entry_points_dir(root)` on sys.path."""
    from torch._dynamo.backends import registry

    path = str(dynamo_entry_points_dir(root))
    if path not in sys.path:
        sys.path.insert(0, path)
    registry._lazy_import()
    registry._discover_entrypoint_backends.cache_clear()
    registry._discover_entrypoint_backends()

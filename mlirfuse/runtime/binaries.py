"""A package's cubins launched as they are: on a GPU, `mlirfuse.load` runs no Triton compile for them.

Triton's JIT compiles a kernel per specialization of its arguments: each
pointer 16-byte aligned or not, each integer divisible by 16 or not, an
integer equal to 1 a constant (`native_specialize_impl`, the JIT's own
rule). A cubin compiled for one specialization is only right for launches
that have it. So a package compiles each kernel for the specialization its
launches take: `package.save` runs the program once on meta tensors with
the launches recorded instead of run (`kernels.recording`: the sizes,
strides and blocks a launch on the GPU computes; a meta tensor's address is
its offset, as a fresh CUDA allocation's is aligned), and `compile_args`
turns a recorded launch into Triton's signature, constants and attributes.

At load, `register` files each cubin under its kernel's source and arch;
`Binary` stands in for the JIT function's `fn[grid](...)`: a launch whose
arguments have the cubin's specialization and whose blocks and options are
the cubin's runs the cubin, any other goes to the JIT function (compiled
as without a package). The specialization is checked per launch, as the
JIT checks it: a later call's unaligned view cannot reach a cubin compiled
for aligned ones.
"""

from __future__ import annotations

import json
from pathlib import Path

try:  # Triton's own specialization rule (Triton >= 3.4); without it, packages' cubins are not launched as they are
    from triton._C.libtriton import native_specialize_impl
    from triton.backends.compiler import BaseBackend
except ImportError:  # pragma: no cover
    native_specialize_impl = None

# name -> source key -> arch -> Binary
_BINARIES: dict[tuple[str, str], dict[int, Binary]] = {}
# Launches that ran a package's cubin, and those its JIT function took (another specialization or block).
STATS = {"cubin": 0, "jit": 0}


def available() -> bool:
    return native_specialize_impl is not None


def _specialize(arg) -> tuple:
    """Triton's (type, attribute) for one argument, as its JIT computes them."""
    return native_specialize_impl(BaseBackend, arg, False, True, True)


def specialization(args) -> list:
    """Per positional argument of a launch, Triton's (type, attribute) for it."""
    return [list(_specialize(a)) for a in args]


def _option_names() -> set[str]:
    from triton.backends.nvidia.compiler import CUDAOptions

    return set(CUDAOptions.__dataclass_fields__)


def compile_args(param_names: list[str], spec: list, kwargs: dict) -> dict:
    """What `triton.compile` takes for a launch of specialization `spec` with keyword arguments `kwargs` (blocks
    and options): {"signature", "constexprs", "options", "attrs"} (attrs as [[index, [[name, value]]], ...])."""
    options = {k: v for k, v in kwargs.items() if k in _option_names()}
    blocks = {k: v for k, v in kwargs.items() if k not in options}
    signature, constexprs, attrs = {}, {}, []
    for i, (name, (kind, attr)) in enumerate(zip(param_names, spec)):
        signature[name] = kind
        if kind == "constexpr":
            constexprs[name] = attr
        elif attr == "D":
            attrs.append([i, [["tt.divisibility", 16]]])
    for name, value in blocks.items():
        signature[name] = "constexpr"
        constexprs[name] = value
    return {"signature": signature, "constexprs": constexprs, "options": options, "attrs": attrs}


class Binary:
    """One kernel's cubin for one arch, launched as its JIT function is (`fn[grid](*args, **kwargs)`)."""

    def __init__(self, cubin: Path, metadata: Path, launch: dict):
        """`launch`: what the cubin was compiled for (`compile_args`' result with the launch's "specialization"
        and "launch_kwargs", as the package's manifest holds it)."""
        self.jit = None  # the kernel's JIT function, given by `bound`
        self.cubin, self.metadata = cubin, metadata
        self.spec = [tuple(s) for s in launch["specialization"]]
        self.kwargs = launch["launch_kwargs"]
        self._args = launch
        self._compiled = None

    def bound(self, jit) -> Binary:
        """This binary, its launches that do not match handed to `jit` (the kernel's JIT function)."""
        if self.jit is not jit:
            self.jit, self._compiled = jit, None
        return self

    def compiled(self):
        if self._compiled is None:
            from triton.compiler import ASTSource
            from triton.compiler.compiler import CompiledKernel

            a = self._args
            attrs = {(i,): value for i, value in a["attrs"]}
            source = ASTSource(fn=self.jit, signature=a["signature"], constexprs=a["constexprs"], attrs=attrs)
            name = json.loads(self.metadata.read_text())["name"]
            self._compiled = CompiledKernel(source, {f"{name}.json": str(self.metadata), f"{name}.cubin": str(self.cubin)},
                                            source.hash())
        return self._compiled

    def matches(self, args, kwargs) -> bool:
        """Whether a launch with `args` and `kwargs` can run the cubin: the same blocks and options, and per
        argument the same type and at least the cubin's assumptions (a cubin assuming no divisibility takes a
        divisible size; one taking an int takes a 1, which Triton's JIT would make a constant)."""
        if kwargs != self.kwargs or len(args) != len(self.spec):
            return False
        for a, (kind, attr) in zip(args, self.spec):
            got_kind, got_attr = _specialize(a)
            if got_kind == kind:
                if attr == got_attr or (attr == "" and kind != "constexpr"):
                    continue
                return False
            if not (got_kind == "constexpr" and got_attr == 1 and kind == "i32" and attr == ""):
                return False
        return True

    def __getitem__(self, grid):
        full = tuple(grid) + (1,) * (3 - len(grid))  # a compiled kernel's launch takes all three grid dims

        def run(*args, **kwargs):
            if self.matches(args, kwargs):
                names = self.jit.arg_names
                STATS["cubin"] += 1
                self.compiled()[full](*args, *(kwargs[n] for n in names[len(args):]))
            else:
                STATS["jit"] += 1
                self.jit[grid](*args, **kwargs)
        return run


def register(name: str, source_key: str, arch: int, binary: Binary) -> None:
    _BINARIES.setdefault((name, source_key), {})[arch] = binary


def registered() -> bool:
    """Whether any cubin is registered (launches look none up otherwise)."""
    return bool(_BINARIES)


def lookup(name: str, source_key: str, arch: int) -> Binary | None:
    return _BINARIES.get((name, source_key), {}).get(arch)


__all__ = ["Binary", "STATS", "available", "compile_args", "lookup", "register", "registered", "specialization"]

"""Each distinct layer compiled once: repeated submodules found before export, one exported per class.

Compile cost must grow with the number of distinct layers, not with depth
(DESIGN.md, compile cost), and export is most of it. So before exporting,
`import_with_layers` runs the model once eagerly with every repeated
submodule observed (same class, code, parameter and buffer names, shapes and
dtypes), and groups their calls by what each one did: the inputs' structure,
shapes and dtypes, the non-tensor arguments' values, and the ATen ops it
dispatched with their arguments (inputs, parameters and intermediates by
position, other tensors by content) and results. Calls with equal records
took the same control path on equal-shaped data: one exported program serves
them all. The largest such units win (a transformer block, not its Linears);
a unit must hold submodules and compute `MIN_LAYER_OPS` ops (views and device
queries aside) to be worth a call boundary, whichfusion does not cross.

One representative per class is exported alone, its parameters and buffers
lifted to arguments. The model is then exported with each occurrence's
`forward` replaced by an opaque custom op (`mlirfuse::layer_<n>`, its fake
implementation returns the recorded output shapes) taking the activations and
the call's number, so export does not trace the layers again; the layers'
parameters and buffers, which no op of that graph reads, are dropped from it
before its decomposition (which re-traces every placeholder: its cost grew
with depth). Both are imported into one module: the layer as a private
`func.func @layer_<Class>`, each custom op rewritten to a `func.call` of it
handed that occurrence's parameters and buffers, new arguments of the outer
function bound by name. The pipeline fuses both
functions (kernels shared between them are one `fusion.kernel`); the runtime
runs the layer's program per call (runtime/program.py).

Refused, and said why in `LayerReport.refusals`: a layer with hooks (they
would not fire), one writing a tensor it did not create (its inputs, buffers,
parameters: the write-back is the caller's), one returning an input or a
view of one (an alias the call boundary would hide), non-tensor arguments or
results other than plain values, calls nested in another observed call, and
layers whose export fails (data-dependent control flow among them: export
refuses to guess). Calls that took another path (a Python attribute or a
tensor's value chose other ops) simply fall into another class. Dynamic
shapes turn the deduplication off. `dedup_layers=False` in `mlirfuse.compile`,
or `MLIRFUSE_NO_LAYER_DEDUP=1`, turns it off.
"""

from __future__ import annotations

import functools
import itertools
import logging
import os
import re
from collections import Counter
from dataclasses import dataclass, field

import torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from torch.export import ExportedProgram
from torch.export.graph_signature import ExportGraphSignature, InputKind
from torch.utils import _pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

from mlirfuse.errors import MlirfuseError, UnsupportedModelError
from mlirfuse.frontend.importer import (
    ImportedProgram,
    decompose,
    functional,
    import_module,
    import_program,
    import_traced,
    program_bindings,
    trace,
)
from mlirfuse.ir import func, ir

logger = logging.getLogger("mlirfuse")

# A unit dispatching fewer ATen ops than this is not outlined: the call boundary would cost fusion more than it saves.
MIN_LAYER_OPS = 4  # a Linear computes 1, a LayerNorm 1; a transformer block dozens
# Tensors neither input, parameter, buffer nor made inside the layer are compared by content up to this many elements.
CONTENT_ELEMENTS = 4096
# Values a layer may take or return besides tensors: compared by value, baked into its program.
PLAIN = (type(None), bool, int, float, str, torch.dtype, torch.device, torch.memory_format, torch.layout)

_op_numbers = itertools.count()


def dedup_enabled(option: bool | None) -> bool:
    """`dedup_layers=` as given, else on unless `MLIRFUSE_NO_LAYER_DEDUP` is set (to anything but "" or "0")."""
    if option is not None:
        return bool(option)
    return os.environ.get("MLIRFUSE_NO_LAYER_DEDUP", "") in ("", "0")


@dataclass
class LayerClass:
    """Structurally identical layer calls compiled once as `func.func @<name>`."""

    name: str  # the IR function: layer_GPT2Block
    type_name: str
    members: list[str]  # module paths, in call order
    calls: int
    bindings: list = field(default_factory=list)  # per function argument: ("input", i) | ("param", rel) | ("buffer", rel) | ("constant", t)


@dataclass
class LayerReport:
    """What layer deduplication did: the classes compiled once, and the layers refused, each with why."""

    classes: list[LayerClass] = field(default_factory=list)
    refusals: list[tuple[str, str]] = field(default_factory=list)  # (module path, why)
    disabled: str | None = None  # why no layer was looked for

    @property
    def calls(self) -> int:
        return sum(c.calls for c in self.classes)

    def __str__(self) -> str:
        if self.disabled:
            return f"layers: not deduplicated ({self.disabled})"
        if not self.classes and not self.refusals:
            return "layers: no repeated layer"
        lines = [f"layers: {self.calls} occurrences of {len(self.classes)} class{'es' * (len(self.classes) != 1)}, each compiled once"
                 if self.classes else "layers: none compiled once"]
        for c in self.classes:
            lines.append(f"  @{c.name}: {c.calls} calls of {c.type_name} ({_span(c.members)})")
        for path, why in self.refusals:
            lines.append(f"  refused {path}: {why}")
        return "\n".join(lines)


def _span(paths: list[str]) -> str:
    return ", ".join(paths) if len(paths) <= 3 else f"{paths[0]}, {paths[1]}, ..., {paths[-1]}"


# ---------------------------------------------------------------------------------------------------------------
# Observation: one eager run, each repeated submodule's calls recorded.


def _static_key(module: torch.nn.Module) -> tuple:
    """What two modules must share to be one layer: class (and so code), parameter, buffer and submodule layout."""
    params = tuple((n, tuple(p.shape), p.dtype) for n, p in module.named_parameters(remove_duplicate=False))
    buffers = tuple((n, tuple(b.shape), b.dtype) for n, b in module.named_buffers(remove_duplicate=False))
    children = tuple((n, type(m)) for n, m in module.named_modules(remove_duplicate=False))
    return type(module), params, buffers, children


def _hooks(module: torch.nn.Module) -> str | None:
    for path, sub in module.named_modules():
        for kind in ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks"):
            if getattr(sub, kind, None):
                where = f" on its submodule '{path}'" if path else ""
                return f"it has a {kind.strip('_').replace('_', ' ')[:-1]}{where} (a compiled layer would not run it)"
    return None


def _content(t: torch.Tensor):
    if t.numel() > CONTENT_ELEMENTS or isinstance(t, FakeTensor) or t.device.type == "meta":
        return ("object", id(t))
    data = t.detach().contiguous().reshape(-1).view(torch.uint8).cpu().numpy().tobytes()
    return ("content", tuple(t.shape), t.dtype, data)


@functools.cache
def _writes(fn) -> list[tuple[int, str]]:
    """(position, name) of the arguments an ATen op writes (`add_`, `out=`)."""
    schema = getattr(fn, "_schema", None)
    if schema is None:
        return []
    return [(i, a.name) for i, a in enumerate(schema.arguments) if a.alias_info is not None and a.alias_info.is_write]


@functools.cache
def _computes(fn) -> bool:
    """An op that computes values: not a `prim` query (device), not a view of its operand."""
    schema = getattr(fn, "_schema", None)
    if schema is None or fn.namespace == "prim":
        return False
    return not all(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)


class _Frame:
    """One call of an observed module: what it read, dispatched and returned, in its own labels."""

    def __init__(self, path: str, module: torch.nn.Module, args: tuple, kwargs: dict):
        self.path, self.module = path, module
        self.why: str | None = _hooks(module)
        self.labels: dict[int, tuple] = {}
        self.keep: list = []  # every tensor labelled, so that no id is reused during the call
        self.ops: list[tuple] = []
        self.computed = 0  # of the ops, those neither views nor queries
        leaves, spec = pytree.tree_flatten((tuple(args), dict(kwargs)))
        self.in_spec, self.leaves = spec, leaves
        meta = []
        for i, x in enumerate(leaves):
            if isinstance(x, torch.Tensor):
                self.labels.setdefault(id(x), ("input", i))
                meta.append(("tensor", tuple(x.shape), x.dtype, x.device))
            elif isinstance(x, PLAIN):
                meta.append(("value", x))
            else:
                self.why = self.why or f"it takes a {type(x).__name__} argument (only tensors and plain values are compiled)"
                meta.append(("object", id(x)))
        self.in_meta = tuple(meta)
        owned = [*module.named_parameters(remove_duplicate=False), *module.named_buffers(remove_duplicate=False)]
        for name, t in owned:
            self.labels.setdefault(id(t), ("state", name))
        self.versions = [(what, t, _version(t)) for what, t in
                         [*((f"input {i}", x) for i, x in enumerate(leaves) if isinstance(x, torch.Tensor)), *owned]]
        self.keep += [x for x in leaves if isinstance(x, torch.Tensor)]

    def label(self, t: torch.Tensor) -> tuple:
        return self.labels.get(id(t)) or _content(t)

    def describe(self, x):
        """An op's argument as the record holds it: tensors by label, lists item by item (ATen's arguments
        nest no deeper), other values as they are."""
        if isinstance(x, torch.Tensor):
            return self.label(x)
        if isinstance(x, (list, tuple)):
            return tuple(self.describe(y) for y in x)
        return x

    def record(self, fn, args: tuple, kwargs: dict, out) -> None:
        j = len(self.ops)
        described = (tuple(self.describe(a) for a in args), tuple((k, self.describe(v)) for k, v in kwargs.items()))
        for position, name in _writes(fn):
            target = args[position] if position < len(args) else kwargs.get(name)
            if isinstance(target, torch.Tensor) and self.label(target)[0] != "op":
                self.why = self.why or (
                    f"it writes a tensor it did not create ({fn.name()} on its {_what(self.label(target))}): "
                    "the write-back is not the layer's to do")
        results = [out] if isinstance(out, torch.Tensor) else [x for x in out if isinstance(x, torch.Tensor)] \
            if isinstance(out, (list, tuple)) else []
        for k, r in enumerate(results):
            self.labels[id(r)] = ("op", j, k)
        self.keep += results
        self.ops.append((fn, described, tuple((tuple(r.shape), r.dtype) for r in results)))
        self.computed += _computes(fn)

    def finish(self, out) -> Call:
        leaves, spec = pytree.tree_flatten(out)
        meta = []
        inputs = {x.untyped_storage()._cdata for x in self.leaves if isinstance(x, torch.Tensor)}
        for x in leaves:
            if isinstance(x, torch.Tensor):
                label = self.label(x)
                if label[0] != "op":
                    self.why = self.why or f"it returns its {_what(label)} (an alias a call would hide)"
                elif x.untyped_storage()._cdata in inputs:
                    self.why = self.why or "its result is a view of an input (an alias a call would hide)"
                meta.append(("tensor", tuple(x.shape), x.dtype, x.device, label))
            elif isinstance(x, PLAIN):
                meta.append(("value", x))
            else:
                self.why = self.why or f"it returns a {type(x).__name__} (only tensors and plain values are compiled)"
                meta.append(("object", id(x)))
        for what, t, version in self.versions:
            if version is not None and _version(t) != version:
                self.why = self.why or f"it writes its {what} in place"
        signature = (str(self.in_spec), self.in_meta, tuple(self.ops), str(spec), tuple(meta))
        return Call(self.why, signature, self.computed)


def _what(label: tuple) -> str:
    kind = label[0]
    if kind == "input":
        return f"input {label[1]}"
    if kind == "state":
        return f"parameter or buffer '{label[1]}'"
    return "tensor made outside it"


def _version(t: torch.Tensor) -> int | None:
    try:
        return t._version
    except Exception:  # inference tensors have none
        return None


@dataclass
class Call:
    """One recorded call of an observed module."""

    why: str | None  # a reason to refuse it, or None
    signature: tuple  # equal for calls one program serves
    ops: int  # ATen ops computed (views and queries aside)


class _Observer(TorchDispatchMode):
    """Hands every ATen op dispatched during observed calls to their frames (nested calls: each frame)."""

    def __init__(self):
        super().__init__()
        self.frames: list[_Frame] = []

    def __torch_dispatch__(self, fn, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = fn(*args, **kwargs)
        for frame in self.frames:
            frame.record(fn, args, kwargs, out)
        return out


def _observe(model: torch.nn.Module, args: tuple, kwargs: dict, watched: dict[str, torch.nn.Module]) -> dict[str, list[Call]]:
    """Run `model` once eagerly, recording each call of the `watched` modules (path -> module)."""
    observer = _Observer()
    calls: dict[str, list[Call]] = {path: [] for path in watched}

    def observed(path, module, forward):
        def run(*a, **k):
            frame = _Frame(path, module, a, k)
            outer = next((f.path for f in observer.frames if not _is_under(path, f.path)), None)
            if outer is not None:
                frame.why = frame.why or f"it is called inside '{outer}', not one of its ancestors"
            observer.frames.append(frame)
            try:
                out = forward(*a, **k)
            finally:
                observer.frames.remove(frame)
            calls[path].append(frame.finish(out))
            return out
        return run

    # On fake tensors: no arithmetic, the model and the inputs untouched, and tracing's view of the model
    # (code asking whether it is traced, as export's does, sees the same).
    fake = FakeTensorMode(allow_non_fake_inputs=True)
    state = {name: fake.from_tensor(t) for name, t in
             [*model.named_parameters(remove_duplicate=False), *model.named_buffers(remove_duplicate=False)]}
    args, kwargs = pytree.tree_map(lambda x: fake.from_tensor(x) if isinstance(x, torch.Tensor) else x, (args, kwargs))
    for path, module in watched.items():
        module.forward = observed(path, module, module.forward)
    try:
        with torch.no_grad(), fake, observer:
            torch.func.functional_call(model, state, args, kwargs, strict=True)
    finally:
        for module in watched.values():
            del module.forward
    return calls


def _is_under(path: str, prefix: str) -> bool:
    return prefix == "" or path == prefix or path.startswith(prefix + ".")


def find_layers(model: torch.nn.Module, args: tuple, kwargs: dict) -> tuple[list[list[str]], list[tuple[str, str]]]:
    """The groups of modules to compile once per group (their paths, in call order) and the refusals (path, why)."""
    modules = dict(model.named_modules())
    keys = {path: _static_key(m) for path, m in modules.items() if path and "forward" not in m.__dict__}
    counts = Counter(keys.values())
    # Modules without submodules (Linear, LayerNorm, an activation) are ops, not layers: not watched.
    watched = {path: modules[path] for path, key in keys.items()
               if counts[key] > 1 and next(modules[path].children(), None) is not None}
    refusals = _differing_stacks(model, keys)
    if not watched:
        return [], refusals
    calls = _observe(model, args, kwargs, watched)
    # Group each module's calls: a module is one member of a class when all its calls agree and none is refused.
    groups: dict[tuple, list[str]] = {}
    why: dict[str, str] = {}
    for path, recorded in calls.items():
        if not recorded:
            continue
        reasons = [c.why for c in recorded if c.why]
        if max(c.ops for c in recorded) < MIN_LAYER_OPS:  # too small to outline, refused or not
            continue
        if reasons:
            why[path] = reasons[0]
        elif len({c.signature for c in recorded}) == 1:
            groups.setdefault((keys[path], recorded[0].signature), []).append(path)
    # The largest units first (modules in tree order: an ancestor before its descendants).
    chosen: list[list[str]] = []
    covered: list[str] = []
    for path in watched:
        if any(_is_under(path, c) for c in covered):
            continue
        if path in why:
            if not any(_is_under(path, p) for p, _ in refusals):
                refusals.append((path, why[path]))
            continue
        key = next((k for k, members in groups.items() if path in members), None)
        if key is None:
            continue
        members = [m for m in groups[key] if not any(_is_under(m, c) for c in covered)]
        members = [m for m in members if not any(m != o and _is_under(m, o) for o in members)]
        if sum(len(calls[m]) for m in members) < 2:
            continue
        chosen.append(members)
        covered += members
    return chosen, refusals


def _differing_stacks(model: torch.nn.Module, keys: dict[str, tuple]) -> list[tuple[str, str]]:
    """Layers of one ModuleList or Sequential that differ in their parameters or buffers: said, not outlined."""
    refusals = []
    for path, module in model.named_modules():
        if not isinstance(module, (torch.nn.ModuleList, torch.nn.Sequential)):
            continue
        children = [f"{path}.{n}" if path else n for n, _ in module.named_children()]
        by_type: dict[type, list[str]] = {}
        for child in children:
            if child in keys:
                by_type.setdefault(keys[child][0], []).append(child)
        for t, paths in by_type.items():
            distinct = {keys[p] for p in paths}
            if len(paths) > 1 and len(distinct) == len(paths):
                refusals.append((path, f"its {t.__name__} layers differ in parameter or buffer shapes: no two are one layer"))
    return refusals


# ---------------------------------------------------------------------------------------------------------------
# Export: the model with every occurrence one custom op, then one program per distinct call.


@dataclass
class _Variant:
    """The calls of one group of layers that export sees alike: one custom op, one exported function."""

    layer: LayerClass
    module: torch.nn.Module  # the representative
    op_name: str  # as the IR names the custom op: torch.mlirfuse.layer_<n>
    op: object
    in_spec: object
    in_leaves: list  # plain values as called; per tensor, its (shape, dtype, device)
    out_spec: object
    out_leaves: list
    program: object = None  # the representative's exported program


def _meta(leaves: list) -> tuple | None:
    """Per leaf, a tensor's (shape, dtype, device) or a plain value; None if a leaf is neither."""
    meta = []
    for x in leaves:
        if isinstance(x, torch.Tensor):
            meta.append(("tensor", tuple(x.shape), x.dtype, x.device))
        elif isinstance(x, PLAIN):
            meta.append(("value", x))
        else:
            return None
    return tuple(meta)


class _Mismatch(MlirfuseError):
    """Layers that cannot be compiled once after all: the model is imported whole."""


class _Outliner:
    """Under the model's export, each chosen module's `forward`: one call of a custom op standing for its layer.

    Calls alike (same group, same arguments' structure, shapes, dtypes and plain values as export sees them,
    which may differ from eager's: a mask built only when tracing) share one op, defined at the first such
    call from the outputs of the module's own forward run on export's fake tensors, untraced.

    The op takes the call's tensor arguments and the call's number (`calls`), not the layer's parameters
    and buffers: those are bound per occurrence after import (`_calls_to_functions`), so the outer graph
    does not carry every layer's state through its decomposition.
    """

    def __init__(self, library):
        self.library = library
        self.variants: dict[tuple, _Variant] = {}
        self.names: Counter = Counter()
        self.calls: list[tuple[_Variant, str]] = []  # per call, in the order export made them: its variant and module path

    def forward(self, group: int, module: torch.nn.Module, path: str):
        original = module.forward

        def forward(*args, **kwargs):
            leaves, spec = pytree.tree_flatten((tuple(args), dict(kwargs)))
            meta = _meta(leaves)
            if meta is None:
                raise _Mismatch(f"{path} takes other arguments under export than when run eagerly")
            key = (group, str(spec), meta)
            variant = self.variants.get(key) or self._define(key, module, path, original, args, kwargs, spec, meta)
            variant.layer.members.append(path)
            variant.layer.calls += 1
            results = variant.op(*(x for x in leaves if isinstance(x, torch.Tensor)), len(self.calls))
            self.calls.append((variant, path))
            results = iter([results] if isinstance(results, torch.Tensor) else results)
            out = [next(results) if isinstance(x, tuple) else x for x in variant.out_leaves]
            return pytree.tree_unflatten(out, variant.out_spec)

        return forward

    def _define(self, key, module, path, original, args, kwargs, spec, meta) -> _Variant:
        from torch.fx.experimental.proxy_tensor import disable_proxy_modes_tracing

        with disable_proxy_modes_tracing():  # the layer's ops on fake tensors, not into the model's graph
            out = original(*args, **kwargs)
        out_leaves, out_spec = pytree.tree_flatten(out)
        out_meta = _meta(out_leaves)
        if out_meta is None or not any(m[0] == "tensor" for m in out_meta):
            raise _Mismatch(f"{path} returns other values under export than when run eagerly")
        type_name = type(module).__name__
        name = "layer_" + re.sub(r"\W", "_", type_name) + (f"_{self.names[type_name]}" if self.names[type_name] else "")
        self.names[type_name] += 1
        op_name = f"layer_{next(_op_numbers)}"
        tensors = sum(m[0] == "tensor" for m in meta)
        arguments = ", ".join([*(f"Tensor a{i}" for i in range(tensors)), "int call"])
        results = [m[1:] for m in out_meta if m[0] == "tensor"]
        self.library.define(f"{op_name}({arguments}) -> ({', '.join('Tensor' for _ in results)})")

        def fake(*operands):
            made = tuple(torch.empty(shape, dtype=dtype, device=device) for shape, dtype, device in results)
            return made[0] if len(made) == 1 else made

        torch.library.register_fake(f"mlirfuse::{op_name}", fake, lib=self.library)
        variant = _Variant(
            LayerClass(name, type_name, [], 0), module, f"torch.mlirfuse.{op_name}",
            getattr(torch.ops.mlirfuse, op_name).default, spec,
            [m[1:] if m[0] == "tensor" else m[1] for m in meta], out_spec,
            [m[1:] if m[0] == "tensor" else m[1] for m in out_meta],
        )
        self.variants[key] = variant
        return variant


class _LayerCall(torch.nn.Module):
    """A layer called as export saw it: the tensor arguments in, the plain ones baked; its tensor results out, flat."""

    def __init__(self, layer: torch.nn.Module, in_spec, in_leaves: list):
        super().__init__()
        self.layer = layer
        self.in_spec, self.in_leaves = in_spec, in_leaves

    def forward(self, *tensors):
        it = iter(tensors)
        leaves = [next(it) if isinstance(x, tuple) else x for x in self.in_leaves]
        args, kwargs = pytree.tree_unflatten(leaves, self.in_spec)
        out = self.layer(*args, **kwargs)
        return tuple(x for x in pytree.tree_leaves(out) if isinstance(x, torch.Tensor))


def _export_layer(variant: _Variant):
    """The representative's functional program, exported alone on zeros shaped as export saw its arguments."""
    examples = tuple(torch.zeros(m[0], dtype=m[1], device=m[2]) for m in variant.in_leaves if isinstance(m, tuple))
    traced = trace(_LayerCall(variant.module, variant.in_spec, variant.in_leaves), examples)
    what = f"layer {variant.layer.members[0]}"
    try:
        program = functional(traced, what)
        bindings = program_bindings(program)
    except UnsupportedModelError:
        program = decompose(traced, {}, what)
        bindings = program_bindings(program)
    mutated = [s for s in program.graph_signature.output_specs if s.kind.name != "USER_OUTPUT"]
    if mutated:
        raise _Mismatch(f"{variant.layer.type_name}'s export writes {mutated[0].target} ({mutated[0].kind.name})")
    if any(kind == "constant" for kind, _ in bindings):
        raise _Mismatch(f"{variant.layer.type_name} has tensor constants (a call cannot bind them yet)")
    variant.layer.bindings = [(kind, what.removeprefix("layer.")) if kind in ("param", "buffer") else (kind, what)
                              for kind, what in bindings]
    variant.program = program


def import_with_layers(model: torch.nn.Module, args: tuple, kwargs: dict) -> ImportedProgram:
    """`import_module(model, args, kwargs)`, each distinct layer exported and imported once.

    Falls back to the plain import (saying why in `layers`) wherever deduplication cannot be done safely.
    """
    report = LayerReport()
    try:
        groups, report.refusals = find_layers(model, args, kwargs)
    except Exception as e:  # the model fails on fake tensors (a value read): its export will say more
        report.disabled = f"the model did not run on fake tensors shaped as the example: {type(e).__name__}: {str(e)[:200]}"
        groups = []
    if groups:
        try:
            imported, report.classes = _import_outlined(model, args, kwargs, groups)
            imported.layers = report
            logger.info("mlirfuse: %s", report)
            return imported
        except MlirfuseError as e:
            report.disabled = f"compiling the layers once failed: {e}"
            logger.info("mlirfuse: %s", report)
    imported = import_module(model, args, kwargs)
    imported.layers = report
    return imported


def _import_outlined(model, args, kwargs, groups: list[list[str]]) -> tuple[ImportedProgram, list[LayerClass]]:
    """The model exported with each group's calls as custom ops, each layer exported once, all in one module."""
    library = torch.library.Library("mlirfuse", "FRAGMENT")
    outliner = _Outliner(library)
    patched = []
    try:
        for group, members in enumerate(groups):
            for path in members:
                module = model.get_submodule(path)
                module.forward = outliner.forward(group, module, path)
                patched.append(module)
        try:
            imported = import_traced(_drop_unread_state(trace(model, args, kwargs)), type(model).__name__, args, kwargs)
        except UnsupportedModelError as e:
            if isinstance(e.__cause__, _Mismatch):
                raise e.__cause__ from None
            raise
    finally:
        for module in patched:
            del module.forward
        library._destroy()
    variants = list(outliner.variants.values())
    for variant in variants:
        _export_layer(variant)
        import_program(variant.program, variant.layer.name, into=imported.module, private=True)
    _calls_to_functions(imported, outliner.calls)
    return imported, [v.layer for v in variants]


def _drop_unread_state(program: ExportedProgram) -> ExportedProgram:
    """`program` without the parameters and buffers its graph never reads: the outlined layers' own.

    Export lifts every parameter and buffer of the model, the layers' too, though
    no op of the outer graph reads them (each layer's call takes its activations
    only). Left in, `run_decompositions` re-traces them all, and its cost grows
    with depth (torch.export's signature is scanned once per placeholder: quadratic).
    """
    graph = program.graph_module.graph
    placeholders = {n.name: n for n in graph.nodes if n.op == "placeholder"}
    state = (InputKind.PARAMETER, InputKind.BUFFER)
    specs = program.graph_signature.input_specs
    unread = [s for s in specs if s.kind in state and not placeholders[s.arg.name].users]
    if not unread:
        return program
    for spec in unread:
        graph.erase_node(placeholders[spec.arg.name])
    program.graph_module.recompile()
    dropped = {s.target for s in unread}
    signature = ExportGraphSignature([s for s in specs if s not in unread], list(program.graph_signature.output_specs))
    return ExportedProgram(
        root=program.graph_module, graph=graph, graph_signature=signature,
        state_dict={k: v for k, v in program.state_dict.items() if k not in dropped},
        range_constraints=program.range_constraints, module_call_graph=program.module_call_graph,
        example_inputs=program.example_inputs, constants=program.constants, verifiers=program.verifiers,
    )


def _drop_unread_arguments(function) -> set[int]:
    """Erase the arguments `function`'s body never reads (the position ids every decoder layer is handed); their numbers.

    A call then no longer keeps a value alive (and its kernel launched) for a
    layer that ignores it.
    """
    block = function.regions[0].blocks[0]
    unread = {a.arg_number for a in block.arguments if not any(True for _ in a.uses)}
    for i in sorted(unread, reverse=True):
        block.erase_argument(i)
    old = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
    function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([a.type for a in block.arguments], list(old.results)))
    return unread


def _calls_to_functions(imported: ImportedProgram, calls: list[tuple[_Variant, str]]) -> None:
    """Each layer's custom op (`torch.operator "torch.mlirfuse.layer_<n>"(activations..., call)`) as a
    `func.call` of its function, handed that call's activations and its module's parameters and buffers.

    The parameters and buffers become arguments of the outer function, one per tensor name
    (`h.3.attn.c_attn.weight`, bound as any other: the module's live tensor on every call).
    """
    module = imported.module
    functions = {ir.StringAttr(op.attributes["sym_name"]).value: op for op in module.body.operations
                 if op.operation.name == "func.func"}
    variants = {v.op_name: v for v, _ in calls}
    outer = functions["forward"]
    block = outer.regions[0].blocks[0]
    # (kind, name) -> the outer function's argument bound to it: those the outer graph reads itself, then the layers'.
    state = {(kind, what): arg for (kind, what), arg in zip(imported.bindings, block.arguments) if kind in ("param", "buffer")}

    def bound(kind: str, name: str, type_) -> ir.Value:
        if (kind, name) not in state:
            state[kind, name] = block.add_argument(type_, ir.Location.unknown())
            imported.bindings.append((kind, name))
        return state[kind, name]

    with module.context:
        unread = {v.layer.name: _drop_unread_arguments(functions[v.layer.name]) for v in variants.values()}
        for op in list(block.operations):
            if op.operation.name != "torch.operator" or ir.StringAttr(op.attributes["name"]).value not in variants:
                continue
            number = getattr(op.operands[-1].owner, "operation", None)
            if number is None or number.name != "torch.constant.int":
                raise _Mismatch(f"a layer call's number is not a constant: {number}")
            variant, path = calls[ir.IntegerAttr(number.attributes["value"]).value]
            name = variant.layer.name
            callee = ir.FunctionType(ir.TypeAttr(functions[name].attributes["function_type"]).value)
            wanted = [b for i, b in enumerate(variant.layer.bindings) if i not in unread[name]]
            if len(wanted) != len(callee.inputs):
                raise _Mismatch(f"@{name} takes {len(callee.inputs)} arguments, its call binds {len(wanted)}")
            operands = [op.operands[what] if kind == "input" else bound(kind, f"{path}.{what}" if path else what, type_)
                        for (kind, what), type_ in zip(wanted, callee.inputs)]
            results = [r.type for r in op.results]
            if list(callee.inputs) != [v.type for v in operands] or list(callee.results) != results:
                raise _Mismatch(f"@{name}'s type {callee} differs from its call's")
            with ir.InsertionPoint(op), op.location:
                call = func.CallOp(results, ir.FlatSymbolRefAttr.get(name), operands)
            for old, new in zip(op.results, call.results):
                old.replace_all_uses_with(new)
            op.erase()
            if not any(True for _ in number.results[0].uses):
                number.erase()
        old = ir.FunctionType(ir.TypeAttr(outer.attributes["function_type"]).value)
        outer.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([a.type for a in block.arguments], list(old.results)))
    if not module.operation.verify():
        raise _Mismatch("the module with layer calls does not verify")

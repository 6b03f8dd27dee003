"""Compiled packages: a compiled model in a folder, loaded back without export, import or fusion.

    cm = mlirfuse.compile(model, (x,))
    mlirfuse.save(cm, "pkg", targets=("sm_80", "sm_90"))  # or: mlirfuse compile MODULE:FACTORY -o pkg
    run = mlirfuse.load("pkg", weights=model)             # or weights=model.state_dict()
    y = run(x)

A package holds:

- `program.mlir`: the final fused IR (the fusion report's, `cm.mlir`);
- `kernels/NAME.py`: each kernel's Triton source; `kernels/NAME.pkl`: what
  the launcher needs beside it (the lowered `TritonKernel`);
- `cubins/sm_XX/NAME.cubin`: each kernel compiled ahead of time per target
  (registers, spills, shared memory and the name of its kernel function in
  the manifest: kernels equal but for their name share one compile, so
  their cubins are the same), for the specialization (alignment,
  divisibility) its launches take, found by a dry run of the program on
  meta tensors (runtime/dryrun.py); `cubins/sm_XX/NAME.json`: Triton's
  metadata of it;
- `constants.pt`: tensors the program takes as constant arguments, if any;
  `buffers.pt`: the values of buffers a state_dict does not hold
  (non-persistent ones: a causal mask, rotary frequencies);
- `manifest.json`: versions, the inputs' guards, how arguments and results
  meet the model, per kernel its canonical hash, launches per call,
  resources and compile seconds (per Triton stage too), and every file's
  sha256;
- `summary.txt`: the same for people.

`load` checks every file against its sha256 (an altered or truncated file
is refused, never run), the versions (a package runs on the mlirfuse,
torch, torch-mlir and Triton it was written with), parses `program.mlir`
and builds the runnable program from the stored kernels: no torch.export,
no FX import, no pass runs, no kernel is lowered. On a GPU of a packaged
target a launch runs the stored cubin where its arguments have the
specialization it was compiled for (else Triton's JIT compiles, as without
a package): no Triton compile at all for the launches the dry run foresaw. Its calls check the
inputs against the guards (shapes, dtypes, devices of the example).
A package of a `dynamic_shapes` compile keeps its `?` sizes: the manifest
holds each input's dims (sizes, symbols with their ranges, expressions of
them) and a call checks its inputs against those; its kernels over `?`
sizes are compiled assuming no divisibility of sizes or strides, so their
cubins serve every size.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from dataclasses import dataclass
from pathlib import Path

import sympy
import torch
from torch.utils import _pytree as pytree

from mlirfuse.compiler import call_program, describe_mismatch, example_arguments
from mlirfuse.dialect import make_context
from mlirfuse.errors import InputMismatchError, MlirfuseError
from mlirfuse.frontend.importer import flatten_inputs, input_meta
from mlirfuse.ir import ir, tensor_type
from mlirfuse.runtime import binaries
from mlirfuse.runtime.aot import AotCompiles, parse_target
from mlirfuse.runtime.cache import kernel_key, mlirfuse_version, versions
from mlirfuse.runtime.dryrun import launch_specializations
from mlirfuse.runtime.graphs import GraphedProgram, check_mode
from mlirfuse.runtime.kernels import source_key
from mlirfuse.runtime.program import Program

FORMAT = 1
MANIFEST = "manifest.json"


class PackageError(MlirfuseError):
    """A package that cannot be written or loaded: what is wrong with it, and what to do."""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _meta_json(meta):
    """An input's guard as JSON: a tensor's (shape, dtype, device), or a plain value."""
    if isinstance(meta, tuple) and len(meta) == 3 and isinstance(meta[1], torch.dtype):
        shape, dtype, device = meta
        return {"tensor": [list(shape), str(dtype).removeprefix("torch."), str(device)]}
    if meta is None or isinstance(meta, (bool, int, float, str)):
        return {"value": meta}
    raise PackageError(f"an input of type {type(meta).__name__} cannot be recorded in a package's guards")


def _meta_from_json(item):
    if "tensor" in item:
        shape, dtype, device = item["tensor"]
        return (tuple(shape), getattr(torch, dtype), torch.device(device))
    return item["value"]


def save(cm, directory, targets=("sm_80", "sm_90"), jobs: int | None = None, on_done=None) -> dict:
    """Write compiled model `cm` (its current specialization) as a package in `directory`; returns the manifest.

    `targets`: GPU architectures each kernel is compiled for ahead of time
    (() for none); `jobs`: parallel compiles; `on_done(count, total, name)`
    is called as each compile finishes (progress). Compiles `cm` started
    (`mlirfuse.compile(..., aot_targets=...)`) are collected, not redone;
    kernels equal but for their name share one compile and cubin (the
    manifest's "function" names the cubin's kernel function).
    """
    graph = cm._current
    imported = graph.imported
    try:
        archs = [parse_target(target) for target in targets]
    except ValueError as e:
        raise PackageError(str(e)) from None
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        raise PackageError(f"{root} is not empty: a package is written into an empty or new folder")
    (root / "kernels").mkdir()
    (root / "program.mlir").write_text(graph.mlir)

    kernel_ops = {}
    for op in imported.module.body.operations:
        if op.operation.name == "fusion.kernel":
            kernel_ops[op.attributes["sym_name"].value] = op
    launches = graph.program.launch_counts()
    kernels = {}
    for name, kernel in graph.kernels.items():
        (root / "kernels" / f"{name}.py").write_text(kernel.source)
        (root / "kernels" / f"{name}.pkl").write_bytes(pickle.dumps(kernel))
        kernels[name] = {
            "kind": str(kernel.kind), "canonical_hash": kernel_key(kernel_ops[name]) if name in kernel_ops else None,
            "launches_per_call": launches.get(name, 0), "targets": {},
        }
    # Kernels the runtime launches as ATen ops (`?` sizes the lowering cannot size) are not in graph.kernels.
    # Every target's compiles in one queue, the most expensive first; those `cm` started are collected.
    compiles = graph.aot or AotCompiles(jobs)
    if jobs:
        compiles.jobs = jobs
    requests, dry_runs = [], {}
    for arch in archs:
        specialized, stopped = graph.aot_specialized.get(arch) or launch_specializations(
            graph.program, graph.kernels, example_arguments(graph.imported, cm.model), arch)
        dry_runs[f"sm_{arch}"] = {"stopped": stopped, "specialized_kernels": len(specialized)}
        requests += [(kernel, arch, specialized.get(kernel.name)) for kernel in graph.kernels.values()]
    for compiled, (_, _, given) in zip(compiles.results(requests, on_done), requests):
        folder = root / "cubins" / f"sm_{compiled.arch}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{compiled.name}.cubin").write_bytes(compiled.cubin)
        (folder / f"{compiled.name}.json").write_text(compiled.metadata)
        usage = compiled.resources()
        kernels[compiled.name]["targets"][f"sm_{compiled.arch}"] = {
            "function": compiled.entry, "registers": usage["reg"], "shared_bytes": compiled.shared,
            "spill_stores": usage["spill_stores"], "spill_loads": usage["spill_loads"],
            "compile_seconds": round(compiled.seconds, 3),
            "compile_stages": {stage: round(seconds, 3) for stage, seconds in compiled.stages},
            # The launch it is compiled for (None: any arguments; its launches then go to Triton's JIT).
            "launch": None if given is None else {
                k: given[k] for k in ("specialization", "launch_kwargs", "signature", "constexprs", "options",
                                      "attrs", "launches", "recorded")},
        }

    constants, bindings = [], []
    for kind, what in imported.bindings:
        if kind == "constant":
            bindings.append(["constant", len(constants)])
            constants.append(what)
        else:
            bindings.append([kind, what])
    if constants:
        torch.save(constants, root / "constants.pt")
    # Buffers a state_dict does not hold (non-persistent: a causal mask, rotary frequencies): their values now.
    persistent = set(cm.model.state_dict())
    unsaved = {what: cm.model.get_buffer(what).detach().clone()
               for kind, what in imported.bindings if kind == "buffer" and what not in persistent}
    if unsaved:
        torch.save(unsaved, root / "buffers.pt")
    manifest = {
        "format": FORMAT,
        "mlirfuse": mlirfuse_version(),
        "versions": versions(),
        "model": type(cm.model).__name__,
        "in_spec": pytree.treespec_dumps(imported.in_spec) if imported.in_spec is not None else None,
        "out_spec": pytree.treespec_dumps(imported.out_spec),
        "inputs": [_meta_json(m) for m in imported.input_meta],
        "input_dims": imported.input_dims,  # dynamic_shapes: per input its sizes and symbols (else None)
        "bindings": bindings,
        "results": [[kind, what] for kind, what in imported.results],
        "output_aliases": {str(i): list(alias) for i, alias in imported.output_aliases.items()},
        "stats": {k: v for k, v in graph.stats.items() if isinstance(v, (int, float))},
        "targets": [f"sm_{a}" for a in archs],
        "dry_runs": dry_runs,
        "kernels": kernels,
    }
    (root / "summary.txt").write_text(summary(manifest))
    manifest["files"] = {
        path.relative_to(root).as_posix(): _sha256(path) for path in sorted(root.rglob("*")) if path.is_file()
    }
    (root / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def summary(manifest: dict) -> str:
    """The package for people: what it holds, per kernel its launches and resources per target."""
    stats = manifest["stats"]
    lines = [
        f"mlirfuse package of {manifest['model']} (format {manifest['format']}, mlirfuse {manifest['mlirfuse']})",
        f"{stats.get('launches', 0)} launches and {stats.get('unfused_ops', 0)} ATen calls per call, "
        f"{len(manifest['kernels'])} distinct kernels, targets: {', '.join(manifest['targets']) or 'none'}",
        "inputs: " + ", ".join(
            f"{m['tensor'][1]}{m['tensor'][0]} on {m['tensor'][2]}" if "tensor" in m else repr(m["value"])
            for m in manifest["inputs"]),
        "",
        "kernel | kind | launches/call | " + " | ".join(f"{t} regs / spills / shared / s" for t in manifest["targets"]),
    ]
    for name, k in manifest["kernels"].items():
        cells = [
            f"{r['registers']} / {r['spill_stores'] + r['spill_loads']} / {r['shared_bytes']} / "
            + (str(r["compile_seconds"]) if r["function"] == name else f"@{r['function']}'s cubin")
            if (r := k["targets"].get(t)) else "-"
            for t in manifest["targets"]
        ]
        lines.append(" | ".join([name, k["kind"], str(k["launches_per_call"]), *cells]))
    return "\n".join(lines) + "\n"


def dims_mismatch(dims: list, metas: list, flat: list) -> str | None:
    """Why flat inputs `flat` do not fit a dynamic package's input dims (`importer.symbolic_dims`) and guards
    (`metas`: dtype and device per tensor, the value of anything else); None where they do."""
    if len(flat) != len(dims):
        return f"expected {len(dims)} inputs, got {len(flat)}"
    bound, derived = {}, []
    for i, (want, meta, x) in enumerate(zip(dims, metas, flat)):
        if want is None:
            if input_meta(x) != meta:
                return f"input {i}: compiled for {meta!r}, got {input_meta(x)!r}"
            continue
        if not isinstance(x, torch.Tensor):
            return f"input {i}: expected a tensor, got {type(x).__name__}"
        if (x.dtype, x.device) != meta[1:]:
            return f"input {i}: compiled for {meta[1]} on {meta[2]}, got {x.dtype} on {x.device}"
        if x.dim() != len(want):
            return f"input {i}: compiled for {len(want)} dims, got shape {list(x.shape)}"
        for d, (size, got) in enumerate(zip(want, x.shape)):
            if isinstance(size, int):
                if got != size:
                    return f"input {i}: dim {d} is {size} in the package, got shape {list(x.shape)}"
                continue
            expr, lower, upper = size
            if not expr.isidentifier():
                derived.append((i, d, expr, got))
                continue
            if bound.setdefault(expr, got) != got:
                return f"input {i}: dim {d} is {expr}, {bound[expr]} in an earlier dim, got {got}"
            if (lower is not None and got < lower) or (upper is not None and got > upper):
                return f"input {i}: dim {d} ({expr}) is {got}, outside its range [{lower}, {upper}]"
    for i, d, expr, got in derived:
        value = sympy.sympify(expr).subs(bound)
        if not (value.is_Integer and int(value) == got):
            return f"input {i}: dim {d} is {expr} = {value}, got {got}"
    return None


@dataclass
class _Signature:
    """How the package's function meets the model (the fields `compiler.call_program` reads)."""

    bindings: list
    results: list
    output_aliases: dict
    out_spec: object


class LoadedModel:
    """A package's program, bound to weights: call it as the model."""

    def __init__(self, root: Path, manifest: dict, program, signature: _Signature, in_spec, input_meta, fetch):
        self.root, self.manifest, self.program = root, manifest, program
        self._dims = manifest.get("input_dims")
        self.runner = program  # or its calls through CUDA graphs (load's mode="reduce-overhead")
        self._signature, self._in_spec, self._input_meta = signature, in_spec, input_meta
        self._parameter = lambda name: fetch("param", name)
        self._buffer = lambda name: fetch("buffer", name)

    def __call__(self, *inputs, **kwargs):
        try:
            flat = flatten_inputs(inputs, kwargs, self._in_spec)
        except ValueError:
            raise InputMismatchError(f"package {self.root}: keyword arguments {sorted(kwargs)} differ from its example's") from None
        if self._dims is not None:
            if (why := dims_mismatch(self._dims, self._input_meta, flat)) is not None:
                raise InputMismatchError(f"package {self.root}: {why}")
        elif [input_meta(x) for x in flat] != self._input_meta:
            raise InputMismatchError(f"package {self.root}: {describe_mismatch(self._input_meta, flat)}")
        return call_program(self.runner, self._signature, flat, self._parameter, self._buffer)

    @property
    def cuda_graphs(self) -> dict | None:
        """With mode="reduce-overhead", how the calls ran (as `CompiledModule.cuda_graphs`); else None."""
        return self.runner.stats if isinstance(self.runner, GraphedProgram) else None


def load(directory, weights, mode: str | None = None, cubins: bool = True) -> LoadedModel:
    """The package in `directory` as a callable, its parameters and buffers taken from `weights` (the model,
    or a state_dict): every file checked against the manifest, no export, import, pass or lowering run.
    `mode`: as `mlirfuse.compile`'s ("reduce-overhead": calls replay CUDA graphs, runtime/graphs.py).
    `cubins`: on a GPU, launch the package's cubins (runtime/binaries.py); False: Triton's JIT compiles every
    kernel, as without a package (A/B)."""
    mode = check_mode(mode)
    root = Path(directory)
    try:
        manifest = json.loads((root / MANIFEST).read_text())
    except FileNotFoundError:
        raise PackageError(f"{root} is no mlirfuse package: it has no {MANIFEST}") from None
    except json.JSONDecodeError as e:
        raise PackageError(f"package {root}: {MANIFEST} is not valid JSON ({e}); write the package again") from None
    if manifest.get("format") != FORMAT or "files" not in manifest:
        raise PackageError(f"package {root}: format {manifest.get('format')!r}, this mlirfuse reads format {FORMAT}")
    present = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()} - {MANIFEST}
    for name, digest in manifest["files"].items():
        path = root / name
        if not path.is_file():
            raise PackageError(f"package {root}: {name} is missing; write the package again")
        if _sha256(path) != digest:
            raise PackageError(f"package {root}: {name} was altered or truncated (its sha256 is not the manifest's); "
                               "it is not loaded: write the package again")
    if extra := sorted(present - set(manifest["files"])):
        raise PackageError(f"package {root}: files the manifest does not list: {', '.join(extra)}")
    if manifest["mlirfuse"] != mlirfuse_version() or manifest["versions"] != versions():
        raise PackageError(
            f"package {root} was written by another mlirfuse, torch, torch-mlir or Triton "
            f"({manifest['versions']!r}, mlirfuse {manifest['mlirfuse']}); this one is "
            f"{versions()!r}, mlirfuse {mlirfuse_version()}: compile the package again"
        )

    kernels = {name: pickle.loads((root / "kernels" / f"{name}.pkl").read_bytes()) for name in manifest["kernels"]}
    for name, entry in manifest["kernels"].items():  # each cubin, for launches with its specialization
        for target, facts in entry["targets"].items():
            launch = facts.get("launch")
            if launch is None or not cubins or not binaries.available():
                continue
            folder = root / "cubins" / target
            binary = binaries.Binary(folder / f"{name}.cubin", folder / f"{name}.json", launch)
            binaries.register(name, source_key(kernels[name].source), int(target[3:]), binary)

    def lower(kernel):
        name = ir.StringAttr(kernel.attributes["sym_name"]).value
        if name not in kernels:
            raise PackageError(f"package {root}: program.mlir launches @{name}, which the package does not hold")
        return kernels[name]

    context = make_context()
    module = ir.Module.parse((root / "program.mlir").read_text(), context)
    func = next(op for op in module.body.operations if op.operation.name == "func.func")
    program = Program(func, module, lower=lower)

    constants = torch.load(root / "constants.pt") if (root / "constants.pt").is_file() else []
    unsaved = torch.load(root / "buffers.pt") if (root / "buffers.pt").is_file() else {}
    bindings = [(kind, constants[what] if kind == "constant" else what) for kind, what in manifest["bindings"]]

    def fetch(kind: str, name: str) -> torch.Tensor:
        """A parameter or buffer of `weights` (a module or a state_dict; a state_dict's missing non-persistent
        buffers from the package)."""
        if isinstance(weights, torch.nn.Module):
            return weights.get_parameter(name) if kind == "param" else weights.get_buffer(name)
        if name not in weights and kind == "buffer" and name in unsaved:
            return unsaved[name]
        return weights[name]

    arguments = func.regions[0].blocks[0].arguments
    for (kind, what), arg in zip(bindings, arguments):
        if kind not in ("param", "buffer"):
            continue
        try:
            tensor = fetch(kind, what)
        except (AttributeError, KeyError):
            raise PackageError(f"package {root}: the weights have no {kind} {what!r}") from None
        t = tensor_type(arg.type)
        if t is not None and (list(tensor.shape) != list(t.shape) or str(tensor.dtype).removeprefix("torch.") != t.dtype):
            raise PackageError(f"package {root}: {kind} {what!r} is {str(tensor.dtype).removeprefix('torch.')}"
                               f"{list(tensor.shape)} in the weights, {t.dtype}{list(t.shape)} in the package")
    signature = _Signature(
        bindings, [tuple(r) for r in manifest["results"]],
        {int(i): tuple(alias) for i, alias in manifest["output_aliases"].items()},
        pytree.treespec_loads(manifest["out_spec"]),
    )
    in_spec = pytree.treespec_loads(manifest["in_spec"]) if manifest["in_spec"] is not None else None
    input_meta = [_meta_from_json(m) for m in manifest["inputs"]]
    loaded = LoadedModel(root, manifest, program, signature, in_spec, input_meta, fetch)
    if mode == "reduce-overhead":
        loaded.runner = GraphedProgram(program, [kind for kind, _ in bindings])
    return loaded


__all__ = ["LoadedModel", "PackageError", "load", "save", "summary"]

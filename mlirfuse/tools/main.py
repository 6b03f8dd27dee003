"""mlirfuse: the main CLI.

    mlirfuse demo [--out DIR] [--aot SM]
        compile the bundled transformer block, print the fusion report,
        write IR and Triton sources, run it (Triton interpreter on CPU) and
        compare with eager, then compile the kernels ahead of time for sm_SM
    mlirfuse viz MODEL_OR_MLIR [-o graph.html] [--format html|dot|svg]
        draw the fusion graph of a .mlir file or a bundled model (TinyBlock):
        one self-contained HTML page, or DOT, or SVG through Graphviz
    mlirfuse cache info|clear
        the persistent compile cache ($MLIRFUSE_CACHE_DIR): its directory,
        entries and bytes per level and size bound; or delete every entry
    mlirfuse compile MODULE:FACTORY [--example 2x64:int64 ...] [--dynamic 0.1=seq:1:512 ...]
                     [--target sm_80,sm_90] -o DIR
        compile the model FACTORY() returns (or the (model, example inputs)
        it returns) and write a package (mlirfuse/package.py): final IR,
        Triton sources, cubins per target, manifest.json, summary.txt;
        `mlirfuse.load(DIR, weights=model)` runs it. `--dynamic I.D=NAME[:MIN:MAX]`:
        dim D of input I is the size NAME (the same NAME: the same size),
        a `?` in the package
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

from mlirfuse.progress import Progress


def fusion_report(cm) -> str:
    """The table the README explains: totals, then one row per kernel.

    The kernel column is as wide as the longest name (never cut), so the
    columns after it stay aligned.
    """
    from mlirfuse.analysis.cost import bytes_text, count_text
    from mlirfuse.ir import computes
    from mlirfuse.runtime.liveness import peak_text

    s = cm.stats
    launches = cm.program.launch_counts()  # a layer compiled once: its launches per call
    kernels = []
    for op in cm.imported.module.body.operations:
        if op.operation.name != "fusion.kernel":
            continue
        ops = [o.operation.name.removeprefix("torch.") for o in op.regions[0].blocks[0].operations if computes(o)]
        kernels.append((op.attributes["sym_name"].value, ops))
    explained = cm.explain()
    width = max([44] + [len(name) for name, _ in kernels] + [len(name) for name in explained])
    lines = [
        "mlirfuse fusion report",
        f"  torch ops imported : {s['aten_ops']}",
        f"  fusion groups      : {s['groups']}",
        f"  distinct kernels   : {s['kernels']}" + (
            f" ({s['constant_merges']} fewer by taking constants as arguments)" if s.get("constant_merges") else ""
        ),
        f"  launches per call  : {s['launches']}",
        f"  unfused ATen ops   : {s['unfused_ops']} ({s['unfused_views']} of them views)",
        f"  operand views      : {s['operand_views']} (views folded into extern calls' operands)",
        f"  peak live memory   : {peak_text(cm.program.plan, [step.name for step in cm.program.steps])}",
        *_cost_lines(cm.cost),
        *_collective_lines(cm.program.steps),
        *(f"  {line}" for line in str(cm.imported.layers or "").splitlines()),  # frontend/layers.py
        "",
        f"  {'kernel':<{width}} {'launches':>8} {'bytes':>10} {'FLOPs':>8}  ops fused",
    ]
    per_launch = {name: cost for name, kind, cost in (cm.cost.steps if cm.cost else []) if kind == "launch"}
    for name, ops in kernels:
        cost = per_launch.get(name)
        moved, flops = (bytes_text(cost.bytes), count_text(cost.flops)) if cost else ("?", "?")
        lines.append(f"  {name:<{width}} {launches.get(name, 0):>8} {moved:>10} {flops:>8}  {', '.join(ops)}")
    unfused = {}
    for step in cm.program.flat_steps():
        if step.kind == "aten" and not step.operand_view:
            unfused[step.name] = unfused.get(step.name, 0) + 1
    lines.append("")
    lines.append("  unfused: " + (", ".join(f"{n.removeprefix('torch.')} x{c}" for n, c in unfused.items()) or "none"))
    if explained:
        lines += ["", f"  {'kernel':<{width}} not fused with, and why"]
        for name, reasons in explained.items():
            for i, reason in enumerate(dict.fromkeys(reasons)):
                lines.append(f"  {name if i == 0 else '':<{width}} {reason}")
    return "\n".join(lines)


def _collective_lines(steps) -> list[str]:
    """The collectives a tensor-parallel graph issues, and the launches that run while one is in flight."""
    from mlirfuse.ops.collectives import overlap

    issued, overlapped = overlap([(step.kind, step.name) for step in steps])
    if not issued:
        return []
    names = ", ".join(f"{name} x{count}" for name, count in issued.items())
    return [f"  collectives        : {sum(issued.values())} ({names}); {overlapped} launches run while one is in flight"]


def _cost_lines(cost) -> list[str]:
    """Bytes and FLOPs per call against the lower bound, and the roofline time (analysis/cost.py)."""
    from mlirfuse.analysis.cost import bytes_text, count_text

    if cost is None:
        return ["  bytes per call     : sizes known only at call time"]
    bound = cost.lower_bound_bytes
    ratio = f"{cost.total.bytes / bound:.2f}x" if bound else "-"
    return [
        f"  bytes per call     : {bytes_text(cost.total.bytes)} moved, lower bound {bytes_text(bound)} ({ratio}); "
        f"{count_text(cost.total.flops)} FLOPs",
        f"  roofline (sm_90)   : {cost.seconds('sm_90') * 1e6:.2f} us per call, "
        f"lower bound {cost.lower_bound_seconds('sm_90') * 1e6:.2f} us",
    ]


def demo(out: Path, arch: int) -> int:
    import torch

    import mlirfuse
    from mlirfuse.models import TinyBlock, demo_inputs

    torch.manual_seed(0)
    model = TinyBlock().eval()
    inputs = demo_inputs()
    cm = mlirfuse.compile(model, inputs, explain=True)
    print(fusion_report(cm))

    out.mkdir(parents=True, exist_ok=True)
    (out / "forward.mlir").write_text(cm.mlir)
    kernels = out / "kernels"
    kernels.mkdir(exist_ok=True)
    for name, kernel in cm.kernels.items():
        (kernels / f"{name}.py").write_text(kernel.source)
    print(f"\nwrote {out / 'forward.mlir'} and {len(cm.kernels)} Triton kernels under {kernels}/")
    from mlirfuse.viz.cli import write_demo_page

    write_demo_page(cm, out / "graph.html")

    got = cm(*inputs)
    with torch.no_grad():
        want = model(*inputs)
    err = (got - want).abs().max().item()
    ok = torch.allclose(got, want, rtol=1e-5, atol=1e-5)
    print(f"max abs error vs eager PyTorch: {err:.3e} ({'ok' if ok else 'MISMATCH'})")

    if arch:
        from mlirfuse.runtime.aot import compile_kernels

        progress = Progress()
        try:
            on_done = functools.partial(progress.step, f"compiled for sm_{arch}: kernel")
            compiled = compile_kernels(list(cm.kernels.values()), arch=arch, on_done=on_done)
        finally:
            progress.done()
        for c in compiled:
            (kernels / f"{c.name}.sm{arch}.cubin").write_bytes(c.cubin)
        size = sum(len(c.cubin) for c in compiled)
        print(f"AOT-compiled {len(compiled)} kernels for sm_{arch} ({size // 1024} KiB of cubin) under {kernels}/")
    return 0 if ok else 1


def cache(action: str) -> int:
    """`mlirfuse cache info` / `clear` (mlirfuse/runtime/cache.py); errors go to stderr with exit 1."""
    import mlirfuse.runtime.cache as store
    from mlirfuse.analysis.cost import bytes_text

    try:
        if action == "clear":
            print(f"removed {store.clear()} files from {store.root()}")
            return 0
        found = store.info()
    except (OSError, ValueError) as e:
        print(f"mlirfuse cache: error: {e}", file=sys.stderr)
        return 1
    print(f"mlirfuse cache: {found['dir']}")
    total = 0
    for level, counts in found["levels"].items():
        total += counts["bytes"]
        print(f"  {level:<9} {counts['entries']:>6} entries {bytes_text(counts['bytes']):>12}")
    bound = found["max_bytes"]
    print(f"  total     {bytes_text(total):>27} of {bound} bytes ({bytes_text(bound)}; MLIRFUSE_CACHE_MAX_BYTES)")
    return 0


def _example(spec: str):
    """A random example input from `2x64:int64` (dims x-separated, a torch dtype; default float32).
    Integer inputs are zeros (a valid index into any table), floating ones standard normal."""
    import torch

    dims, _, dtype_name = spec.partition(":")
    dtype = getattr(torch, dtype_name or "float32", None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"--example {spec!r}: {dtype_name!r} is not a torch dtype")
    try:
        shape = [int(d) for d in dims.split("x")] if dims else []
    except ValueError:
        raise ValueError(f"--example {spec!r}: dims are integers separated by x (2x64)") from None
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=dtype)
    return torch.zeros(shape, dtype=dtype)


def _dynamic_shapes(specs: list[str], count: int):
    """torch.export's dynamic_shapes (a tuple per input) from `I.D=NAME[:MIN:MAX]` flags; None for none."""
    from torch.export import Dim

    if not specs:
        return None
    dims: dict[str, object] = {}
    shapes: list[dict | None] = [None] * count
    for spec in specs:
        where, _, size = spec.partition("=")
        name, *bounds = size.split(":")
        try:
            if not size:
                raise ValueError
            index, dim = (int(n) for n in where.split("."))
            low, high = (int(b) if b else None for b in bounds) if bounds else (None, None)
        except ValueError:
            raise ValueError(f"--dynamic {spec!r}: expected INPUT.DIM=NAME or INPUT.DIM=NAME:MIN:MAX (0.1=seq:1:512)") from None
        if not name.isidentifier():
            raise ValueError(f"--dynamic {spec!r}: {name!r} is not a name")
        if not 0 <= index < count:
            raise ValueError(f"--dynamic {spec!r}: there are {count} example inputs")
        if name not in dims:
            dims[name] = Dim(name, **({"min": low} if low is not None else {}), **({"max": high} if high is not None else {}))
        shapes[index] = (shapes[index] or {}) | {dim: dims[name]}
    return tuple(shapes)


def compile_package(target: str, examples: list[str], targets: str, out: Path, jobs: int | None,
                    dynamic: list[str] = ()) -> int:
    """`mlirfuse compile`: import MODULE, call FACTORY, compile, write the package; errors as one line, exit 1."""
    import importlib

    import mlirfuse
    from mlirfuse.package import PackageError
    from mlirfuse.runtime.aot import parse_target

    module_name, _, factory_name = target.partition(":")
    if not module_name or not factory_name:
        print(f"mlirfuse compile: expected MODULE:FACTORY, got {target!r}", file=sys.stderr)
        return 1
    try:
        if str(Path.cwd()) not in sys.path:
            sys.path.insert(0, str(Path.cwd()))
        factory = getattr(importlib.import_module(module_name), factory_name)
    except (ImportError, AttributeError) as e:
        print(f"mlirfuse compile: cannot find {target}: {e}", file=sys.stderr)
        return 1
    made = factory()
    model, inputs = made if isinstance(made, tuple) else (made, None)
    try:
        if examples:
            inputs = tuple(_example(spec) for spec in examples)
    except ValueError as e:
        print(f"mlirfuse compile: {e}", file=sys.stderr)
        return 1
    if inputs is None:
        print("mlirfuse compile: give --example shapes, or have FACTORY return (model, example inputs)", file=sys.stderr)
        return 1
    try:
        dynamic_shapes = _dynamic_shapes(list(dynamic), len(inputs))
    except ValueError as e:
        print(f"mlirfuse compile: {e}", file=sys.stderr)
        return 1
    arches = [t.strip() for t in targets.split(",") if t.strip()]
    try:
        for arch in arches:
            parse_target(arch)
    except ValueError as e:
        print(f"mlirfuse compile: {e}", file=sys.stderr)
        return 1
    progress = Progress()
    try:
        # The AOT worker pool starts before the export; the kernels' compiles start once they are compiled.
        cm = mlirfuse.compile(model.eval(), tuple(inputs), dynamic_shapes=dynamic_shapes, aot_targets=arches)
        progress.phase("compiling kernels ahead of time")
        total = len(cm.kernels) * len(arches)
        counter = iter(range(total))
        manifest = mlirfuse.save(cm, out, arches, jobs=jobs,
                                 on_done=lambda _i, _n, name: progress.step("compiled", next(counter), total, name))
    except (mlirfuse.MlirfuseError, PackageError) as e:
        print(f"mlirfuse compile: {e}", file=sys.stderr)
        return 1
    finally:
        progress.done()
    print((out / "summary.txt").read_text(), end="")
    print(f"wrote {out} ({len(manifest['files'])} files)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mlirfuse", description="mlirfuse: a fusion compiler for PyTorch on MLIR")
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="compile, report, run and check the bundled transformer block")
    d.add_argument("--out", type=Path, default=Path("demo-out"), help="folder for the IR and Triton sources")
    d.add_argument("--aot", type=int, default=90, metavar="SM", help="also compile the kernels for sm_SM (0: skip)")
    v = sub.add_parser("viz", help="draw the fusion graph of a .mlir file or a bundled model")
    v.add_argument("target", metavar="MODEL_OR_MLIR", help="a .mlir file (torch dialect, or already fused) or TinyBlock")
    v.add_argument("-o", dest="output", type=Path, help="output file (default: graph.FORMAT)")
    v.add_argument("--format", choices=("html", "dot", "svg"), help="default: from -o's suffix, else html (svg needs Graphviz)")
    c = sub.add_parser("cache", help="show or clear the persistent compile cache ($MLIRFUSE_CACHE_DIR)")
    c.add_argument("action", choices=("info", "clear"), help="info: directory, entries and bytes per level; clear: delete them")
    p = sub.add_parser("compile", help="compile a model ahead of time into a package (mlirfuse.load runs it)")
    p.add_argument("target", metavar="MODULE:FACTORY", help="a function returning the model, or (model, example inputs)")
    p.add_argument("--example", action="append", default=[], metavar="SHAPE[:DTYPE]",
                   help="an example input per flag, e.g. 2x64:int64 (random floats, integer zeros)")
    p.add_argument("--dynamic", action="append", default=[], metavar="I.D=NAME[:MIN:MAX]",
                   help="dim D of example input I is a `?` size NAME (same NAME, same size), e.g. 0.1=seq:1:512")
    p.add_argument("--target", dest="targets", default="sm_80,sm_90", help="GPU targets for cubins ('' for none)")
    p.add_argument("--jobs", type=int, default=None, help="parallel kernel compiles (default: one per core)")
    p.add_argument("-o", dest="output", type=Path, required=True, help="package folder (new or empty)")
    args = parser.parse_args(argv)
    if args.command == "compile":
        return compile_package(args.target, args.example, args.targets, args.output, args.jobs, args.dynamic)
    if args.command == "demo":
        return demo(args.out, args.aot)
    if args.command == "viz":
        from mlirfuse.viz.cli import viz

        return viz(args.target, args.output, args.format)
    if args.command == "cache":
        return cache(args.action)
    return 1


if __name__ == "__main__":
    sys.exit(main())

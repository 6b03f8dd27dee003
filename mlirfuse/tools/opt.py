"""mlirfuse-opt: an mlir-opt-style driver for mlirfuse's passes and upstream ones.

    mlirfuse-opt input.mlir --pass-pipeline='builtin.module(mlirfuse-pipeline, cse)'
    mlirfuse-opt input.mlir --fusion-fuse-elementwise --fusion-canonicalize
    mlirfuse-opt input.mlir --split-input-file --verify-diagnostics
    mlirfuse-opt input.mlir --mlirfuse-pipeline --emit-triton

User mistakes (unparsable or malformed input, see input_checks; unknown
pass, bad option, verifier failure, a kernel Triton cannot express) print
located diagnostics and exit 1; they never raise a traceback. Neither does a
bug in mlirfuse: it is an "internal error" diagnostic (MLIRFUSE_DEBUG=1
prints the traceback too).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback

from mlirfuse.dialect import make_context, verify_fusion_ops
from mlirfuse.errors import MlirfuseError
from mlirfuse.ir import ir
from mlirfuse.passes import PASSES, PIPELINES, get_pass_class
from mlirfuse.tools.diagnostics import Collector, Diag, expectations, verify
from mlirfuse.tools.input_checks import check_ir, check_text, decode

SPLIT_MARKER = "// -----"


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's default exit code is 2; mlir-opt's is 1
        self.print_usage(sys.stderr)
        print(f"mlirfuse-opt: error: {message}", file=sys.stderr)
        sys.exit(1)


def _arg_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="mlirfuse-opt", description=__doc__.split("\n")[0])
    p.add_argument("input", nargs="?", default="-", help="input file ('-' for stdin)")
    p.add_argument("-o", dest="output", default="-", help="output file ('-' for stdout)")
    p.add_argument("--pass-pipeline", help="textual pipeline, e.g. 'builtin.module(mlirfuse-pipeline, cse)'")
    p.add_argument("--split-input-file", action="store_true", help=f"split the input at '{SPLIT_MARKER}' lines")
    p.add_argument("--verify-diagnostics", action="store_true", help="check diagnostics against expected-* comments")
    p.add_argument(
        "--allow-unregistered-dialect", action="store_true",
        help="accept ops of dialects mlirfuse does not register (only 'fusion' otherwise)",
    )
    p.add_argument("--list-passes", action="store_true", help="list passes and pipelines with their docs")
    p.add_argument("--mlir-print-ir-after-all", action="store_true", help="print the IR after every pass")
    p.add_argument("--mlir-timing", action="store_true", help="print pass timing")
    p.add_argument("--emit-triton", action="store_true", help="print the Triton source of each fusion.kernel instead of IR")
    p.add_argument(
        "--fusion-explain", action="store_true",
        help="attach fusion.explain to each group/launch: neighbours not fused and why",
    )
    p.add_argument(
        "--verify-analyses", action="store_true",
        help="after each pass, recompute every maintained analysis and fail on a difference",
    )
    for name in list(PASSES) + list(PIPELINES):
        p.add_argument(f"--{name}", dest="passes", action="append_const", const=name, help=argparse.SUPPRESS)
    return p


def list_passes() -> str:
    lines = ["Passes:"]
    for name in PASSES:
        doc = (get_pass_class(name).__doc__ or "").strip()
        lines.append(f"  --{name}")
        lines.extend(f"      {line.strip()}" for line in doc.splitlines() if line.strip())
    lines.append("Pipelines:")
    for name, steps in PIPELINES.items():
        lines.append(f"  --{name}")
        lines.append(f"      {(steps.__doc__ or '').strip()}")
        lines.append(f"      = {', '.join(steps())}")
    return "\n".join(lines) + "\n"


def _chunks(text: str, split: bool) -> list[tuple[str, int]]:
    """(chunk, first line number) pairs."""
    if not split:
        return [(text, 1)]
    chunks, current, start = [], [], 1
    for i, line in enumerate(text.split("\n"), start=1):
        if line.strip() == SPLIT_MARKER:
            chunks.append(("\n".join(current), start))
            current, start = [], i + 1
        else:
            current.append(line)
    chunks.append(("\n".join(current), start))
    return chunks


def _process(chunk: str, first_line: int, filename: str, args) -> tuple[str | None, list[Diag]]:
    from mlirfuse.passes.pipeline import build_pass_manager

    context = make_context()
    collector = Collector(context, filename)
    output = None
    try:
        with context:
            # Pad so that locations count lines of the whole file.
            module = ir.Module.parse("\n" * (first_line - 1) + chunk)
            if not check_ir(module, args.allow_unregistered_dialect) or not verify_fusion_ops(module.operation):
                return None, collector.diags
            pipeline = args.pass_pipeline or ",".join(args.passes or [])
            if pipeline:
                pm = build_pass_manager(
                    pipeline,
                    context,
                    print_ir_after_all=args.mlir_print_ir_after_all,
                    timing=args.mlir_timing,
                    verify_analyses=args.verify_analyses or None,
                    explain=args.fusion_explain,
                )
                pm.run(module.operation)
            if args.emit_triton:
                output = _emit_triton(module)
            else:
                output = str(module)
    except ir.MLIRError as e:
        collector.add_error(e)
    except MlirfuseError as e:
        collector.diags.append(Diag("error", filename, 0, 0, str(e)))
    except Exception as e:  # a bug in mlirfuse: an error message, not a traceback
        collector.diags.append(Diag("error", filename, 0, 0, _internal_error("mlirfuse-opt", e)))
    finally:
        collector.detach()
    return output, collector.diags


def _internal_error(where: str, e: Exception) -> str:
    """The one-line message for a bug in mlirfuse (MLIRFUSE_DEBUG=1 also prints the traceback)."""
    if os.environ.get("MLIRFUSE_DEBUG"):
        traceback.print_exc(file=sys.stderr)
    first_line = next(iter(str(e).splitlines()), "")
    return f"internal error in {where}: {type(e).__name__}: {first_line}"


def _emit_triton(module: ir.Module) -> str | None:
    """Each kernel's source; None when one cannot be lowered (the error is emitted at that kernel)."""
    from mlirfuse.lowering.triton import LoweringError, lower_kernel

    sources, failed = [], False
    for op in module.body.operations:
        if op.operation.name != "fusion.kernel":
            continue
        try:
            sources.append(lower_kernel(op).source)
        except LoweringError as e:
            op.location.emit_error(str(e))
            failed = True
        except Exception as e:  # a bug in the lowering: located at its kernel, not a traceback
            op.location.emit_error(_internal_error("the Triton lowering", e))
            failed = True
    return None if failed else "\n\n".join(sources)


def main(argv: list[str] | None = None) -> int:
    args = _arg_parser().parse_args(argv)
    if args.list_passes:
        sys.stdout.write(list_passes())
        return 0
    filename = "<stdin>" if args.input == "-" else args.input
    try:
        if args.input == "-":
            stdin = getattr(sys.stdin, "buffer", None)  # a text-only stand-in when main() is called from Python
            data = stdin.read() if stdin is not None else sys.stdin.read().encode()
        else:
            with open(args.input, "rb") as f:
                data = f.read()
    except OSError as e:
        print(f"mlirfuse-opt: error: cannot read '{filename}': {e.strerror}", file=sys.stderr)
        return 1
    text, problem = decode(data, filename)
    problem = problem or check_text(text, filename)
    if problem is not None:
        print(problem.format(), file=sys.stderr)
        return 1

    outputs, failed = [], False
    for chunk, first_line in _chunks(text, args.split_input_file):
        output, diags = _process(chunk, first_line, filename, args)
        if args.verify_diagnostics:
            problems = verify(diags, expectations(chunk, first_line), filename)
            for p in problems:
                print(p, file=sys.stderr)
            failed |= bool(problems)
        else:
            for d in diags:
                print(d.format(), file=sys.stderr)
            failed |= any(d.severity == "error" for d in diags)
        if output is not None and not any(d.severity == "error" for d in diags):
            outputs.append(output)

    if not args.verify_diagnostics:
        result = f"\n{SPLIT_MARKER}\n".join(o.rstrip("\n") for o in outputs) + "\n"
        if args.output == "-":
            sys.stdout.write(result)
        else:
            try:
                with open(args.output, "w") as f:
                    f.write(result)
            except OSError as e:
                print(f"mlirfuse-opt: error: cannot write '{args.output}': {e.strerror}", file=sys.stderr)
                return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

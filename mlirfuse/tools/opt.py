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
import difflib
import os
import sys
import traceback

from mlirfuse.diagnostics import Collector, Diag, expectations, verify
from mlirfuse.dialect import make_context, verify_fusion_ops
from mlirfuse.errors import MlirfuseError, PipelineError
from mlirfuse.input_checks import check_ir, check_text, decode
from mlirfuse.ir import ir
from mlirfuse.passes import PASSES, PIPELINES, get_pass_class, pass_options, pipeline_stages
from mlirfuse.passes.pipeline_text import Pipeline, parse_pipeline
from mlirfuse.passes.policy import load, using

SPLIT_MARKER = "// -----"


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's default exit code is 2; mlir-opt's is 1
        self.print_usage(sys.stderr)
        if message.startswith("unrecognized arguments:"):
            flags = [f"--{name}" for name in list(PASSES) + list(PIPELINES)]
            for arg in message.split(":", 1)[1].split():
                close = difflib.get_close_matches(arg.partition("=")[0], flags, n=1)
                if close:
                    message += f" (did you mean '{close[0]}'?)"
        print(f"mlirfuse-opt: error: {message}", file=sys.stderr)
        sys.exit(1)

    def format_help(self) -> str:
        # The pass flags with their options; built only for --help (it imports every pass).
        return super().format_help() + "\n" + PASS_FLAGS_HELP + "\n" + list_passes()


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
        "--fusion-policy", metavar="FILE.py:NAME",
        help="put every legal merge to this policy function (mlirfuse.passes.policy), which may veto it",
    )
    p.add_argument(
        "--verify-analyses", action="store_true",
        help="after each pass, recompute every maintained analysis and fail on a difference (implies --verify-each)",
    )
    p.add_argument(
        "--verify-each", action="store_true",
        help="run the fusion ops' verifiers (and MLIR's) after each of our passes, not only after the last",
    )
    # Listed after the options by format_help, with their options; taken out of argv by _take_pass_flags.
    for name in list(PASSES) + list(PIPELINES):
        p.add_argument(f"--{name}", dest="passes", action="append_const", const=name, help=argparse.SUPPRESS)
    return p


PASS_FLAGS_HELP = """\
Each pass and pipeline below is a flag; flags run in the order given. A pass's
options are spelled as in --pass-pipeline, compile(..., options=...) and
mlirfuse.embed:
  --fusion-fuse-vertical='max-args=64 max-group-size=8'
  --pass-pipeline='builtin.module(fusion-fuse-vertical{max-args=64 max-group-size=8}, cse)'
"""


def list_passes() -> str:
    lines = ["Passes:"]
    for name in PASSES:
        doc = (get_pass_class(name).__doc__ or "").strip()
        lines += _flag_help(name, [line.strip() for line in doc.splitlines() if line.strip()])
    lines.append("Pipelines:")
    for name, doc in PIPELINES.items():
        lines += _flag_help(name, [doc, f"= {', '.join(stage.name for stage in pipeline_stages(name))}"])
    return "\n".join(lines) + "\n"


def _flag_help(name: str, doc: list[str]) -> list[str]:
    options = pass_options(name)
    lines = [f"  --{name}" + ("[='<option>=<value> ...']" if options else "")]
    lines += [f"      {line}" for line in doc]
    if options:
        lines.append("      options:")
        lines += [f"        {option}" for option in options]
    return lines


def _take_pass_flags(argv: list[str]) -> tuple[list[str], list[tuple[str, str | None, str]]]:
    """Take `--<pass>` and `--<pass>=<options>` out of argv: (the rest, [(pass, its options or None, the flag as given)])."""
    rest, flags = [], []
    for arg in argv:
        name, eq, value = arg[2:].partition("=") if arg.startswith("--") else ("", "", "")
        if name in PASSES or name in PIPELINES:
            flags.append((name, value if eq else None, arg))
        else:
            rest.append(arg)
    return rest, flags


def _pipeline(args, flags) -> Pipeline | None:
    """The pipeline the command line asks for, parsed and checked once (not per input chunk).

    A bad one raises PipelineError located in what was typed: the
    --pass-pipeline text, or the flag.
    """
    from mlirfuse.passes.pipeline import build_pass_manager

    if args.pass_pipeline is not None and flags:
        raise PipelineError(f"--pass-pipeline cannot be combined with pass flags ({flags[0][2]} ...)")
    if args.pass_pipeline is not None:
        pipeline = parse_pipeline(args.pass_pipeline)
    else:
        pipeline = Pipeline(())
        for name, value, arg in flags:
            element = name if value is None else f"{name}{{{value}}}"
            try:
                pipeline += parse_pipeline(element)
            except PipelineError as e:  # located in the flag as typed: `name{` there is `--name=`
                e.source, e.column = arg, None if e.column is None else e.column + 2
                raise
    if not pipeline.text:
        return None
    build_pass_manager(pipeline, make_context())  # upstream elements too
    return pipeline


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
            if args.pipeline:
                pm = build_pass_manager(
                    args.pipeline,
                    context,
                    print_ir_after_all=args.mlir_print_ir_after_all,
                    timing=args.mlir_timing,
                    verify_analyses=args.verify_analyses or None,
                    verify_each=args.verify_each or None,
                    explain=args.fusion_explain,
                )
                with using(args.policy):
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
    argv, flags = _take_pass_flags(sys.argv[1:] if argv is None else list(argv))
    args = _arg_parser().parse_args(argv)
    if args.list_passes:
        sys.stdout.write(list_passes())
        return 0
    try:
        args.pipeline = _pipeline(args, flags)
    except PipelineError as e:
        print(e.located("<pass-pipeline>" if args.pass_pipeline is not None else "<command-line>"), file=sys.stderr)
        return 1
    args.policy = None
    if args.fusion_policy:
        try:
            args.policy = load(args.fusion_policy)
        except (ValueError, ImportError, SyntaxError) as e:
            print(f"mlirfuse-opt: error: --fusion-policy: {e}", file=sys.stderr)
            return 1
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

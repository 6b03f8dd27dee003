"""The malformed-input corpus through mlirfuse-opt as a user runs it.

Every case, through `--mlirfuse-pipeline` and through `--mlirfuse-pipeline
--emit-triton`, must end with exit code 1 and a located `file:LINE:COL:
error:`, within a timeout: no traceback, no signal, no hang. The cases are
the lit files under test/lit/Errors/ (which also check each message) and
inputs generated here that a lit file cannot hold or that come in bulk:
bytes that are not UTF-8, every truncation of a program, deep nesting.
What lit cannot say and this does: the exit code is exactly 1, never a
signal, and no case, in either mode, prints a traceback anywhere.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from mlirfuse.dialect import make_context, verify_fusion_ops
from mlirfuse.ir import ir
from mlirfuse.passes.mark_persistent import MarkPersistent
from mlirfuse.passes.pipeline import build_pass_manager

REPO = Path(__file__).resolve().parents[1]
ERRORS = REPO / "test" / "lit" / "Errors"
MODES = {"pipeline": ["--mlirfuse-pipeline"], "emit-triton": ["--mlirfuse-pipeline", "--emit-triton"]}
LOCATED = re.compile(r":\d+:\d+: error: ")


def unescape_bytes(data: bytes) -> bytes:
    """`@xHH@` markers to the byte 0xHH, as `%unescape-bytes` in test/lit/Errors/lit.local.cfg."""
    return re.sub(rb"@x([0-9a-f][0-9a-f])@", lambda m: bytes([int(m[1], 16)]), data)


T = "!torch.vtensor<[4,8],f32>"
R = "!torch.vtensor<[4,1],f32>"
# A valid program: a kernel, its launch and a reduction group.
PROGRAM = f"""\
"fusion.kernel"() ({{
^bb0(%a: {T}):
  %1 = torch.aten.exp %a : {T} -> {T}
  "fusion.yield"(%1) : ({T}) -> ()
}}) {{kind = "pointwise", sym_name = "k"}} : () -> ()
func.func @f(%arg0: {T}) -> {T} {{
  %0 = "fusion.launch"(%arg0) {{kernel = @k}} : ({T}) -> {T}
  %1 = "fusion.group"(%0) ({{
  ^bb0(%b: {T}):
    %int1 = torch.constant.int 1
    %true = torch.constant.bool true
    %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %2 = torch.aten.amax %b, %dims, %true : {T}, !torch.list<int>, !torch.bool -> {R}
    %3 = torch.aten.sub.Tensor %b, %2, %int1 : {T}, {R}, !torch.int -> {T}
    "fusion.yield"(%3) : ({T}) -> ()
  }}) {{kind = "reduction"}} : ({T}) -> {T}
  return %1 : {T}
}}
"""


def _generated() -> dict[str, bytes]:
    cases = {}
    program = PROGRAM.encode()
    # Bytes that are not UTF-8, in code, in a string, in a comment, at the end.
    bad = {
        "ff": b"\xff", "continuation": b"\x80", "overlong": b"\xc0\x80", "surrogate": b"\xed\xa0\x80",
        "five-byte": b"\xf8\x88\x80\x80\x80", "latin1": "é".encode("latin-1"),
    }
    where = {
        "code": lambda b: program.replace(b"%1 = torch.aten.exp", b"%1 = torch.aten.exp" + b, 1),
        "string": lambda b: program.replace(b'sym_name = "k"', b'sym_name = "k' + b + b'"', 1),
        "comment": lambda b: b"// " + b + b"\n" + program,
        "start": lambda b: b + program,
    }
    for bname, b in bad.items():
        for wname, put in where.items():
            cases[f"utf8-{bname}-in-{wname}"] = put(b)
    cases["utf8-truncated-at-end"] = program + "// €".encode()[:-1]
    # Truncations a few bytes apart, but not where the kernel ends (the rest is a valid program).
    kernel_end = program.index(b"func.func")
    for cut in range(program.index(b"{") + 1, len(program) - 2, 71):
        if not kernel_end - 2 <= cut <= kernel_end:
            cases[f"truncated-at-{cut}"] = program[:cut]
    # Deep nesting of each bracket, where MLIR's parser would overflow the stack.
    n = 20000
    cases["deep-braces"] = b"module {" * n + b"}" * n
    cases["deep-brackets"] = b"func.func @f() attributes {a = " + b"[" * n + b"]" * n + b"} { return }"
    cases["deep-angles"] = b"func.func @f(%a: " + b"tuple<" * n + b"i32" + b">" * n + b") { return }"
    cases["deep-parens"] = b"func.func @f() attributes {a = affine_map<" + b"(" * n + b")" * n + b"> } { return }"
    cases["deep-regions"] = b'func.func @f() {\n' + b'"test.r"() ({\n' * n + b"}) : () -> ()\n" * n + b"  return\n}\n"
    # Nothing to compile.
    cases["empty"] = b""
    cases["whitespace"] = b" \n\t\n"
    cases["comments"] = b"// one\n   // two\n"
    # Huge numbers.
    cases["dim-over-int64"] = program.replace(b"[4,8]", b"[4,9223372036854775808]")
    cases["numel-over-int64"] = program.replace(b"[4,8]", b"[4,4611686018427387904]")
    cases["int-over-int64"] = program.replace(b"torch.constant.int 1", b"torch.constant.int 18446744073709551616")
    return cases


CORPUS = {f"Errors/{p.name}": unescape_bytes(p.read_bytes()) for p in sorted(ERRORS.glob("*.mlir"))}
CORPUS.update(_generated())


def test_program_is_valid(tmp_path):
    """The generated cases break a program that compiles: a failure below is the damage's doing."""
    path = tmp_path / "program.mlir"
    path.write_text(PROGRAM)
    for mode, flags in MODES.items():
        result = _opt(path, flags)
        assert result.returncode == 0, (mode, result.stderr)


def test_corpus_is_large():
    assert len(list(ERRORS.glob("*.mlir"))) >= 40 and len(CORPUS) >= 100


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_malformed_input_is_a_located_error(name, tmp_path):
    path = tmp_path / "input.mlir"
    path.write_bytes(CORPUS[name])
    for mode, flags in MODES.items():
        result = _opt(path, flags)
        where = f"{name} ({mode}): exit {result.returncode}\n{result.stderr[-2000:]}"
        assert result.returncode == 1, where  # negative: killed by a signal
        assert LOCATED.search(result.stderr), where
        assert "Traceback" not in result.stderr + result.stdout, where


def _opt(path: Path, flags: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mlirfuse.tools.opt", str(path), *flags],
        capture_output=True, text=True, errors="replace", cwd=REPO, timeout=120, check=False,
    )


# The Errors cases holding a malformed fusion op that parses: what an embedder hands the pass manager.
FUSION_CASES = sorted(
    p.name for p in ERRORS.glob("*.mlir") if b'"fusion.' in p.read_bytes() and b"@x" not in p.read_bytes()
)


def test_fusion_cases_found():
    assert len(FUSION_CASES) >= 20, FUSION_CASES


@pytest.mark.parametrize("name", FUSION_CASES)
def test_malformed_fusion_op_through_the_python_pipeline(name):
    """`build_pass_manager(...).run` (the embedding API) verifies the fusion ops of its input before the first
    pass reads them, as mlirfuse-opt does: a located error at the op, not a pass's internal error."""
    text = (ERRORS / name).read_text()
    with make_context() as ctx:
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError:
            pytest.skip("does not parse: mlirfuse-opt's own case")
        with pytest.raises(ir.MLIRError) as raised:
            # As users run it: the fusion ops verified once, after the last pass (the tests' default checks them
            # after each pass, which would report the input's op after the first pass, whatever it made of it).
            pm = build_pass_manager("builtin.module(mlirfuse-pipeline)", ctx, verify_analyses=False, verify_each=False)
            pm.run(module.operation)
    message = str(raised.value)
    assert "internal error" not in message and "Traceback" not in message, message
    located = re.search(r'error: "-":(\d+):\d+: ', message)
    assert located and int(located[1]) > 0, message


@pytest.mark.parametrize("name", ["kind-reduction-not-fused.mlir", "kind-reduction-without-reduction.mlir"])
def test_mark_persistent_leaves_a_malformed_reduction_group_to_the_verifier(name):
    """fusion-mark-persistent applied to a reduction group whose reduction fusion does not take (its reason string,
    not a reduction) or that holds none: left as it is, for the verifier to report; no AttributeError."""
    with make_context():
        module = ir.Module.parse((ERRORS / name).read_text())
        MarkPersistent().apply(module.operation)
        assert '{kind = "reduction"}' in str(module)
        assert not verify_fusion_ops(module.operation)

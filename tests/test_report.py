"""The fusion report (`mlirfuse demo`, examples/transformers_report.py) read back: it must agree with the IR.

The report is parsed as a user reads it (totals, the kernel table, the
unfused line, the explain table) and every number is checked against the
final IR, counted independently of `cm.stats` and of the report's code.
"""

from __future__ import annotations

import re

import pytest
import torch
from torch import nn

import mlirfuse
from mlirfuse.ir import ir
from mlirfuse.ops.views import VIEW_OPS
from mlirfuse.passes.outline import kernel_name
from mlirfuse.tools.main import fusion_report

TOTALS = {
    "torch ops imported": "aten_ops",
    "fusion groups": "groups",
    "distinct kernels": "kernels",
    "launches per call": "launches",
    "unfused ATen ops": "unfused_ops",
    "operand views": "operand_views",
}
TORCH_OP = re.compile(r"torch\.(?:aten|prims)\.[\w.]+")


class LongNames(nn.Module):
    """A chain of many distinct elementwise ops (a kernel name longer than the old 44-column field),
    a softmax, matmuls left unfused and a head-split view feeding one."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(16, 16))

    def forward(self, x):
        y = x @ self.w
        z = torch.reciprocal(torch.sigmoid(torch.tanh(torch.exp(torch.neg(torch.abs(y))))) + 1)
        z = torch.relu(torch.sin(torch.cos(torch.sqrt(z))))
        s = torch.softmax(z, dim=-1)
        heads = s.view(4, 2, 16).transpose(0, 1)
        return heads @ heads.transpose(1, 2), s.sum(-1)


@pytest.fixture(scope="module")
def compiled():
    torch.manual_seed(0)
    # matmul="aten": extern calls with operand views, so every total of the report is exercised.
    cm = mlirfuse.compile(LongNames().eval(), (torch.randn(8, 16),), explain=True, matmul="aten")
    return cm, fusion_report(cm)


def parse(report: str) -> dict:
    lines = report.splitlines()
    totals = {}
    for line in lines:
        m = re.match(r"  (.+?)\s+: (\d+)", line)
        if m and m.group(1) in TOTALS:
            totals[TOTALS[m.group(1)]] = int(m.group(2))
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["kernel", "launches"])
    end = lines[header].index("launches") + len("launches")  # the launches column is right-aligned here
    ops_column = lines[header].index("ops fused")
    rows = []
    for line in lines[header + 1 :]:
        if not line.strip():
            break
        assert line[end] == " " and line[end - 8 : end].strip().isdigit(), f"launches column moved: {line!r}"
        assert line[ops_column - 2 : ops_column] == "  " and line[ops_column] != " ", f"ops column moved: {line!r}"
        rows.append((line[2 : end - 8].strip(), int(line[end - 8 : end]), line[ops_column:].split(", ")))
    unfused_line = next(line for line in lines if line.strip().startswith("unfused:"))
    unfused = {m.group(1): int(m.group(2)) for m in re.finditer(r"([\w.]+) x(\d+)", unfused_line)}
    explain = []
    if any(line.split()[:2] == ["kernel", "not"] for line in lines):
        start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["kernel", "not"])
        column = lines[start].index("not fused with")
        for line in lines[start + 1 :]:
            assert line[column - 1] == " " and line[column] != " ", f"reason column moved: {line!r}"
            explain.append((line[:column].strip(), line[column:]))
    return {"totals": totals, "rows": rows, "unfused": unfused, "explain": explain}


def count_ir(module: ir.Module) -> dict:
    """What the final IR holds, counted from the IR: kernels, launches, unfused ops and views."""
    kernels = {}
    launches = unfused = unfused_views = operand_views = 0
    for op in module.body.operations:
        if op.operation.name == "fusion.kernel":
            body = op.regions[0].blocks[0].operations
            kernels[op.attributes["sym_name"].value] = [
                o.operation.name for o in body if TORCH_OP.fullmatch(o.operation.name)
            ]
        if op.operation.name != "func.func":
            continue
        for inner in op.regions[0].blocks[0].operations:
            name = inner.operation.name
            if name == "fusion.launch":
                launches += 1
            elif name == "fusion.group":  # an extern group: one ATen call, its views are its operands
                assert inner.attributes["kind"].value == "extern"
                unfused += 1
                operand_views += sum(o.operation.name in VIEW_OPS for o in inner.regions[0].blocks[0].operations)
            elif TORCH_OP.fullmatch(name):
                unfused += 1
                unfused_views += name in VIEW_OPS
    return dict(kernels=kernels, launches=launches, unfused=unfused, unfused_views=unfused_views, operand_views=operand_views)


def test_report_totals_agree_with_stats_and_ir(compiled):
    cm, report = compiled
    parsed, found = parse(report), count_ir(cm.imported.module)
    assert parsed["totals"] == {key: cm.stats[key] for key in TOTALS.values()}
    assert cm.stats["kernels"] == len(found["kernels"]) == len(parsed["rows"]) == len(cm.kernels)
    assert cm.stats["launches"] == cm.stats["groups"] == found["launches"] == sum(n for _, n, _ in parsed["rows"])
    assert cm.stats["unfused_ops"] == found["unfused"] == sum(parsed["unfused"].values())
    assert cm.stats["operand_views"] == found["operand_views"] >= 1
    m = re.search(r"unfused ATen ops   : \d+ \((\d+) of them views\)", report)
    assert int(m.group(1)) == cm.stats["unfused_views"] == found["unfused_views"]


def test_report_rows_name_each_kernel_and_its_ops(compiled):
    cm, report = compiled
    found = count_ir(cm.imported.module)["kernels"]
    rows = parse(report)["rows"]
    assert [name for name, _, _ in rows] == list(found)  # whole names, in IR order
    for name, _, ops in rows:
        assert ["torch." + op for op in ops if TORCH_OP.fullmatch("torch." + op)] == found[name]


def test_long_kernel_names_keep_the_columns_aligned(compiled):
    cm, report = compiled
    longest = max(cm.kernels, key=len)
    assert len(longest) > 44, report  # longer than the field the report used to pad to
    parsed = parse(report)  # asserts every row's columns line up with the headers
    assert longest in [name for name, _, _ in parsed["rows"]]
    assert parsed["explain"] and all(name in cm.kernels or not name for name, _ in parsed["explain"])


def test_kernel_names_hold_whole_op_names(compiled):
    cm, _ = compiled
    for name, ops in count_ir(cm.imported.module)["kernels"].items():
        stem = re.fullmatch(r"fused_(.+)_\d+", name).group(1)
        distinct = list(dict.fromkeys(op.split(".")[2] for op in ops if op.startswith("torch.aten.")))
        prefixes = ["_".join(distinct[:k]).strip("_") for k in range(1, len(distinct) + 1)]
        assert stem in prefixes, (name, distinct)
        assert len(stem) <= 40 or stem == prefixes[0]


def test_kernel_name_cuts_between_ops():
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    ops = "\n".join(f'"torch.aten.{op}"() : () -> ()' for op in ["abs", "neg", "exp", "tanh", "sigmoid", "reciprocal", "floor", "cos"])
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(f'"fusion.kernel"() ({{\n{ops}\n}}) : () -> ()')
        kernel = module.body.operations[0]
        # 40 characters would end inside "floor": the stem stops before it.
        assert kernel_name(kernel, 3) == "fused_abs_neg_exp_tanh_sigmoid_reciprocal_3"


def test_report_states_the_cost_models_numbers(compiled):
    # Bytes per call against the lower bound, and each kernel's bytes per launch (analysis/cost.py).
    cm, report = compiled
    stats = cm.stats
    assert stats["bytes"] == cm.cost.total.bytes and stats["bytes_lower_bound"] == cm.cost.lower_bound_bytes
    assert stats["bytes"] >= stats["bytes_lower_bound"] > 0
    ratio = f"({stats['bytes'] / stats['bytes_lower_bound']:.2f}x)"
    assert any(line.startswith("  bytes per call") and ratio in line for line in report.splitlines()), report
    assert "roofline (sm_90)" in report

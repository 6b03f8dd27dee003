"""fusion-outline: deduplicate groups into module-level kernels.

Each `fusion.group` body moves into a `fusion.kernel` symbol and the group
becomes a `fusion.launch` of it. Two groups whose bodies print the same once
values are renumbered (canonical form: generic, local scope, no locations)
share one kernel, so each structural class is compiled once.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.analysis import AnalysisManager
from mlirfuse.dialect import GroupKind, build_kernel, build_launch, canonical_form, group_kind
from mlirfuse.errors import PipelineError
from mlirfuse.ir import ir
from mlirfuse.passes.base import ModulePass
from mlirfuse.passes.options import option
from mlirfuse.passes.rewriter import FusionRewriter

# fusion-outline's precision option: what a kernel's lowering does with f16/bf16 intermediates.
PRECISIONS = ("fast", "eager")


def kernel_name(kernel, index: int) -> str:
    """fused_<first ops>_<n>, like Inductor's names: readable in traces.

    The stem holds whole op names only, as many as fit in 40 characters
    (the first one always): a name is never cut mid-op.
    """
    ops = [op.operation.name.split(".")[2] for op in kernel.regions[0].blocks[0].operations if op.operation.name.startswith("torch.aten.")]
    stem = ""
    for op in dict.fromkeys(ops):
        longer = f"{stem}_{op}" if stem else op
        if stem and len(longer) > 40:
            break
        stem = longer
    return f"fused_{stem.strip('_') or 'copy'}_{index}"


@dataclasses.dataclass(frozen=True)
class Outline(ModulePass):
    """Outline each fusion.group into a fusion.kernel symbol and call it with fusion.launch; structurally identical groups share one kernel."""

    name = "fusion-outline"

    precision: str = option(
        "fast", "fast: a kernel keeps f16/bf16 intermediates in f32; eager: each op's f16/bf16 result is "
        "rounded to its dtype, as eager stores it (pointwise chains then equal eager's bit for bit)",
    )

    def __post_init__(self):
        if self.precision not in PRECISIONS:
            raise PipelineError(f"option 'precision' of pass '{self.name}' is one of {', '.join(PRECISIONS)}, "
                                f"got '{self.precision}'", option="precision")

    def apply(self, module: ir.Operation, am=None) -> None:
        rewriter = FusionRewriter(am or AnalysisManager())
        body = module.regions[0].blocks[0]
        # Extern groups are ATen calls, not Triton kernels: they stay in place.
        groups = [
            op for op in _walk(module)
            if op.operation.name == "fusion.group" and group_kind(op) != GroupKind.EXTERN
        ]
        if not groups:
            return
        anchor = body.operations[0]
        existing = [op for op in body.operations if op.operation.name == "fusion.kernel"]
        by_form = {canonical_form(k): k.attributes["sym_name"].value for k in existing}
        count = len(existing)
        for group in groups:
            kernel = build_kernel("", group_kind(group), loc=group.location, ip=ir.InsertionPoint(anchor))
            group.regions[0].blocks[0].append_to(kernel.regions[0])  # move, not copy
            if self.precision != "fast":
                kernel.attributes["precision"] = ir.StringAttr.get(self.precision)
            form = canonical_form(kernel)
            name = by_form.get(form)
            if name is None:
                name = kernel_name(kernel, count)
                count += 1
                kernel.attributes["sym_name"] = ir.StringAttr.get(name)
                by_form[form] = name
            else:
                kernel.operation.erase()
            launch = build_launch(name, list(group.operands), [r.type for r in group.results], loc=group.location)
            if "fusion.explain" in group.attributes:  # per call site, so not part of the kernel
                launch.attributes["fusion.explain"] = group.attributes["fusion.explain"]
            rewriter.insert_before(launch, group)
            rewriter.replace_op(group, list(launch.results))


def _walk(op: ir.Operation) -> list:
    found = []

    def visit(o):
        found.append(o.opview)
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return found

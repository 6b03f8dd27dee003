"""fusion-chunk-motion's reshape rewrite: reshapes moved below the elementwise ops that read them.

`f(reshape(a), s) -> reshape(f(a, s))` when every other tensor operand `s` is
a single element, so the elementwise work joins the group computing `a`
(group_norm's activation fuses into the normalization kernel).
`move_reshapes` runs it from the reshapes the pass found, on each op it
offers in turn, each op listed once at a time.
"""

from __future__ import annotations

from mlirfuse.ir import TorchBuilder, defining_op, ir, op_id, static_tensor_types, tensor_type
from mlirfuse.ops.elementwise import RULES, fusible
from mlirfuse.ops.reductions import REDUCTIONS
from mlirfuse.ops.views import RESHAPES, view_args
from mlirfuse.passes.slice_motion import erase_unread, replace


def reshape_below_elementwise(op) -> list:
    """f(reshape(a), s) -> reshape(f(a, s)) when every other tensor operand s is a single element.

    The elementwise work moves into `a`'s shape, where it can join the group
    computing `a`; the reshape ends up after it (an exit reshape, free). The
    group_norm decomposition ends in such a reshape, so its activation
    (SiLU, ReLU, a scale) fuses into the normalization kernel. Returns the
    ops that may match now: the moved op and the readers of the new reshape.
    """
    if not fusible(op):
        return []
    out = tensor_type(op.results[0].type)
    reshaped = None
    for v in op.operands:
        t = tensor_type(v.type)
        if t is None or (reshaped is not None and v == reshaped):
            continue  # a constant, or the reshaped operand again (x * x)
        owner = defining_op(v)
        if reshaped is None and owner is not None and owner.name in RESHAPES and t.shape == out.shape:
            if view_args(owner) is not None and static_tensor_types(owner.operands[0]):
                reshaped = v
                continue
        if not t.is_static or t.numel != 1:
            return []
    if reshaped is None:
        return []
    reshape = defining_op(reshaped)
    source = reshape.operands[0]
    producer = defining_op(source)
    if producer is None or not (producer.name in REDUCTIONS or (producer.name in RULES and fusible(producer.opview))):
        return []  # a view of an input is read in place by the group; moving it gains nothing
    shape = tensor_type(source.type).shape
    if any(len(tensor_type(v.type).shape) > len(shape) for v in op.operands if tensor_type(v.type) and v != reshaped):
        return []  # a rank-raising scalar would change the result's rank
    b = TorchBuilder(ir.InsertionPoint(op), op.location)
    moved = b.op(op.operation.name, [source if v == reshaped else v for v in op.operands], shape, out.dtype)
    view = b.view(moved, out.shape, out.dtype)
    replace(op, op.results[0], view)
    if next(iter(reshape.results[0].uses), None) is None:
        arguments = list(reshape.operands)[1:]
        reshape.erase()
        erase_unread(arguments)
    return [moved.owner, *_elementwise_readers([view])]


def _elementwise_readers(values) -> list:
    return [use.owner for v in values for use in v.uses if use.owner.operation.name in RULES]


def move_reshapes(reshapes: list) -> None:
    """Run reshape_below_elementwise on the elementwise readers of `reshapes` and on what each rewrite offers, once
    at a time each (a set of the listed ops' addresses: an op is erased only once taken from the list)."""
    todo, listed = [], set()

    def offer(ops):
        for op in ops:
            if op_id(op) not in listed:
                listed.add(op_id(op))
                todo.append(op)

    offer(_elementwise_readers(op.results[0] for op in reshapes))
    while todo:
        op = todo.pop()
        listed.discard(op_id(op))
        offer(reshape_below_elementwise(op))

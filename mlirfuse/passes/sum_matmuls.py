"""fusion-sum-matmuls: a sum of matmuls as one matmul over their operands concatenated along K.

`A1 @ B1 + A2 @ B2 + ... = cat([A1, A2, ...], -1) @ cat([B1, B2, ...], 0)`.
A weight used at every step of an unrolled recurrence (an LSTM's W_ih and
W_hh) gets its gradient as such a sum: AOTAutograd's backward computes one
`g_t.t() @ x_t` per step and adds them up, each partial product the size of
the weight. As separate GEMMs each partial is stored and read back by the
adds; as one GEMM over K = the steps it is never stored, and
fusion-fuse-matmul reads both cats piece by piece (K-split): no cat is
stored either.

The rewrite is decided by bytes (`analysis/cost.value_bytes`): it is made
where it pays even if the cats were stored, i.e. where the terms' operands
hold fewer bytes than their partial products (`g_t.t() @ x_t`: K = the
batch, far below M and N). A forward's `x @ W_ih.T + h @ W_hh.T` reads
weights far bigger than its result: it stays two GEMMs, which
fusion-fuse-matmul groups with their sum as the epilogue.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from mlirfuse.analysis.cost import sum_sizes, value_bytes
from mlirfuse.ir import NO_CONSTANT, TorchBuilder, constant_value, ir, is_constant_like, op_id, tensor_type
from mlirfuse.ops.matmul import Gemm, gemm, transposes_2d
from mlirfuse.ops.views import PERMUTES
from mlirfuse.passes.base import ModulePass, function_level_ops, ops_named
from mlirfuse.passes.options import option

ADD = "torch.aten.add.Tensor"
# The matmuls a term may be: no bias, no scale, B a 2-D matrix (the sum's K cat is along its rows).
_TERM_OPS = ("torch.aten.mm", "torch.aten.matmul")


@dataclass
class _Term:
    """One product of the sum, oriented as the sum's result: `a @ b`, `transposed`: `(a @ b).t()` = `b.t() @ a.t()`."""

    a: ir.Value
    b: ir.Value
    transposed: bool
    ops: list  # the ops computing the term (its views, outermost first, then the matmul): erased once it is merged

    def bytes(self) -> int | None:
        return sum_sizes([value_bytes(self.a), value_bytes(self.b)])


def _single_use(value: ir.Value) -> bool:
    uses = iter(value.uses)
    return next(uses, None) is not None and next(uses, None) is None


def _sum_step(value: ir.Value, result_type) -> ir.OpView | None:
    """The add.Tensor (alpha 1) computing `value`, if `value` is read once and has the sum's type: an inner step of it."""
    op = value.owner
    if not isinstance(op, ir.OpView) or op.operation.name != ADD or value.type != result_type or not _single_use(value):
        return None
    return op if _alpha_one(op) else None


def _alpha_one(add) -> bool:
    alpha = constant_value(add.operands[2])
    return alpha is not NO_CONSTANT and not isinstance(alpha, bool) and alpha == 1


def _leaves(root) -> tuple[list[ir.Value], list]:
    """The values `root` adds up through inner add steps, left to right, and those steps (each before its operands')."""
    leaves, steps, stack = [], [], [root]
    while stack:
        item = stack.pop()
        if isinstance(item, ir.Value):
            leaves.append(item)
            continue
        steps.append(item)
        for v in reversed(list(item.operands)[:2]):  # the left operand's subtree comes out first
            stack.append(_sum_step(v, root.results[0].type) or v)
    return leaves, steps


def _product(value: ir.Value) -> tuple[list, bool] | None:
    """(The ops computing `value`, transposed) if it is 2-D transposes (read once each) of an mm/matmul read only by
    them, the matmul last; else None. What a term is before its GEMM is checked."""
    ops, transposed = [], False
    while True:
        op = value.owner
        if not isinstance(op, ir.OpView) or not _single_use(value):
            return None
        ops.append(op)
        if op.operation.name in _TERM_OPS:
            return ops, transposed
        if op.operation.name not in PERMUTES or not transposes_2d(op):
            return None
        transposed, value = not transposed, op.operands[0]


def _term(value: ir.Value) -> _Term | None:
    """`value` as a product: 2-D transposes (read once each) of an unbatched mm/matmul read only by them, else None."""
    found = _product(value)
    if found is None:
        return None
    ops, transposed = found
    op = ops[-1]
    g = gemm(op)
    if not isinstance(g, Gemm) or g.batch or g.bias is not None or g.alpha != 1 or g.dynamic:
        return None
    a, b = op.operands[g.a], op.operands[g.b]
    if len(tensor_type(b.type).shape) != 2 or (transposed and len(tensor_type(a.type).shape) != 2):
        return None
    return _Term(a, b, transposed, ops)


def _may_pay(value: ir.Value, out: ir.Value) -> bool:
    """Whether `value` could be a term of a merge that pays (`_pays`): a product whose operands hold fewer bytes than
    `out`. A chunk's operands weigh less than its partial products only if one term's do: where none could, no
    chunk pays, and no GEMM is checked (an LSTM forward's `x @ W_ih.T + h @ W_hh.T`: weights far above the gates)."""
    found = _product(value)
    if found is None:
        return False
    mm = found[0][-1]  # mm / matmul: A and B are operands 0 and 1 (`gemm`)
    operands, partial = sum_sizes([value_bytes(mm.operands[0]), value_bytes(mm.operands[1])]), value_bytes(out)
    return operands is not None and partial is not None and operands < partial


def _small_operands(mm) -> bool:
    """Could `mm` (an mm / matmul) be the product of a term `_may_pay` takes: do its operands hold fewer bytes than its
    result (or is its result's size unknown, where a transpose of it may have a known one)?"""
    operands, partial = sum_sizes([value_bytes(mm.operands[0]), value_bytes(mm.operands[1])]), value_bytes(mm.results[0])
    return operands is not None and (partial is None or operands < partial)


# The ops `SumMatmuls.apply` lists: the products `_small_operands` asks first, then the adds it may rewrite.
_PRODUCTS = frozenset(_TERM_OPS)
_ADDS = frozenset((ADD,))


def _pays(terms: list[_Term], out: ir.Value) -> bool:
    """Whether one GEMM over the terms' operands moves fewer bytes than the terms' partial products, even with both
    cats stored: the cats written and read once against each partial product written and read once."""
    operands = sum_sizes(t.bytes() for t in terms)
    partial = value_bytes(out)
    return operands is not None and partial is not None and operands < len(terms) * partial


def _merged(terms: list[_Term], root, b: TorchBuilder, built: dict) -> ir.Value:
    """One matmul `cat(A pieces, -1) @ cat(B pieces, 0)` over `terms`, built before `root`, typed as its result.

    `built` (the function's, kept across sums) hands back a transpose or cat built for an earlier sum: the
    weight gradients of `x_t @ W_ih.T + h_t @ W_hh.T` share their A pieces (the gates' gradients), and one cat
    read by both GEMMs is read by each piece by piece (two cats would be merged into one stored group first).
    """

    def transposed(v: ir.Value) -> ir.Value:
        if v not in built:
            t = tensor_type(v.type)
            built[v] = b.op("torch.aten.t", [v], t.shape[::-1], t.dtype)
        return built[v]

    def piece(v: ir.Value) -> ir.Value:  # a transpose of a value: the first one of it (`g.t()` spelled per GEMM)
        op = v.owner
        if isinstance(op, ir.OpView) and op.operation.name in PERMUTES and transposes_2d(op):
            return built.setdefault(op.operands[0], v)
        return v

    def cat(values: list, dim: int) -> ir.Value:
        key = (dim, *values)
        if key not in built:
            built[key] = b.cat(values, dim)
        return built[key]

    pairs = [(transposed(t.b), transposed(t.a)) if t.transposed else (piece(t.a), piece(t.b)) for t in terms]
    out = tensor_type(root.results[0].type)
    a = cat([p[0] for p in pairs], len(tensor_type(pairs[0][0].type).shape) - 1)
    return b.op("torch.aten.matmul" if len(out.shape) > 2 else "torch.aten.mm", [a, cat([p[1] for p in pairs], 0)],
                out.shape, out.dtype)


def _erase_unread(constants: list) -> None:
    """Erase those of `constants` (and lists of constants, then their items) nothing reads any more."""
    erased = set()
    while constants:
        op = constants.pop()
        if op_id(op) in erased or any(True for r in op.results for _ in r.uses):
            continue
        erased.add(op_id(op))
        items = [v.owner for v in op.operands]
        op.operation.erase()
        constants += items


@dataclasses.dataclass(frozen=True)
class SumMatmuls(ModulePass):
    """Rewrite a sum of matmuls (add.Tensor chains of mm/matmul results, through 2-D transposes) as one matmul over their operands concatenated along K, where that moves fewer bytes even with the cats stored.

    `g0.t() @ x0 + g1.t() @ x1 + ...` (a weight gradient summed over the
    steps of an unrolled recurrence) becomes `cat([g0.t(), g1.t(), ...], 1)
    @ cat([x0, x1, ...], 0)`: the partial products are never stored, and
    fusion-fuse-matmul reads both cats piece by piece (K-split). Terms whose
    operands outweigh their products (a forward's `x @ W1 + h @ W2`) stay
    separate GEMMs, summed by their grouped kernel's epilogue. Only terms
    read by the sum alone, unbatched, without bias or scale, of the sum's
    type, are merged; other addends stay added to the merged product.
    Options: max-terms (default 16) products per merged GEMM (each brings
    two pieces: kernel arguments and K loops); past it, one GEMM per
    max-terms products, added.
    """

    name = "fusion-sum-matmuls"

    max_terms: int = option(16, "most products concatenated into one GEMM (each adds two K-split pieces)")

    def apply(self, module: ir.Operation, am=None) -> None:
        for products in function_level_ops(module, _PRODUCTS):
            if not any(_small_operands(op) for op in products):
                continue  # no sum of them can pay (`_may_pay`): an LSTM forward's 1,600 GEMMs, its 3,600 adds unlisted
            func = products[0].parent
            built = {}
            # A rewrite erases only ops before its root (terms, inner steps): none yet to come.
            for op in [op for op in ops_named(func, _ADDS) if op.parent == func]:
                if self._is_root(op):
                    self._rewrite(op, built)

    @staticmethod
    def _is_root(op) -> bool:
        """An add (alpha 1) that is no inner step of a bigger sum: the root of its tree, which it rewrites whole."""
        if not _alpha_one(op):
            return False
        uses = list(op.results[0].uses)
        if len(uses) != 1:
            return True
        parent = uses[0].owner
        return not (parent.operation.name == ADD and uses[0].operand_number < 2 and _alpha_one(parent)
                    and parent.results[0].type == op.results[0].type)

    def _rewrite(self, root, built: dict) -> None:
        leaves, steps = _leaves(root)
        if not any(v.type == root.results[0].type and _may_pay(v, root.results[0]) for v in leaves):
            return
        terms, rest = [], []
        for v in leaves:
            t = _term(v) if v.type == root.results[0].type else None
            (rest if t is None else terms).append(t or v)
        chunks = [terms[i : i + self.max_terms] for i in range(0, len(terms), max(self.max_terms, 1))]
        if not any(len(c) > 1 and _pays(c, root.results[0]) for c in chunks):
            return
        b = TorchBuilder(ir.InsertionPoint(root), root.location)
        out = tensor_type(root.results[0].type)
        addends, dead, merged = [], [], []
        for chunk in chunks:
            if len(chunk) > 1 and _pays(chunk, root.results[0]):
                addends.append(_merged(chunk, root, b, built))
                dead += [op for t in chunk for op in t.ops]
                merged += [t.ops[-1] for t in chunk]
            else:
                addends += [t.ops[0].results[0] for t in chunk]
        total = addends[0]
        for v in addends[1:] + rest:
            total = b.op(ADD, [total, v, b.int(1)], out.shape, out.dtype)
        root.results[0].replace_all_uses_with(total)
        read = [v.owner for op in steps + dead for v in op.operands if is_constant_like(v)]
        # The merged matmuls' operands that are transposes: one another transpose of the same value stands for
        # (`piece` in `_merged`) is read by nothing once its matmul is gone.
        views = {op_id(v.owner): v.owner for op in merged for v in op.operands
                 if isinstance(v.owner, ir.OpView) and v.owner.operation.name in PERMUTES}
        for op in steps + dead:  # each op's reader is erased before it
            op.operation.erase()
        for op in views.values():
            if not any(True for _ in op.results[0].uses):
                read += [v.owner for v in op.operands if is_constant_like(v)]
                op.operation.erase()
        _erase_unread(read)


__all__ = ["SumMatmuls"]

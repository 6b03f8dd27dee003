"""Every op that issue 13 (item 5) lowers to Triton has its tests: a lit case fusing it, its limits, numerics.

The ops Inductor turns into kernels (indexing, creation, pooling, the
elementwise-completeness ops, pads and cat) are listed once below, in the
form the importer gives them to the fuser (torch.export's spelling, and
torch.compile's where it differs: `_adaptive_avg_pool2d`,
`reflection_pad2d`, ...). For each, this test reads the sources (nothing is
compiled) and fails unless:

- a lit function `@fuse_*` in test/lit/Transforms holds the op and its
  split-input-file case FileChecks the op after a `fusion.group` (the op is
  checked inside the group);
- a lit function `@no_fuse_*` holds the op and its case checks it, showing
  a limit (where the fuser refuses the op in some real import), unless
  NO_LIMIT says why the fuser never refuses it;
- the numeric test named for it (a pytest function, or a table of cases
  such a function runs) exists and calls the user-facing op.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIT = ROOT / "test" / "lit" / "Transforms"
A = "torch.aten."

# (op as the fuser sees it, numeric test as "file::function or table", what that test calls)
ITEM5 = [
    # indexing
    (A + "embedding", "test_indexing.py::test_embedding_fused_with_its_consumer", "F.embedding("),
    (A + "index.Tensor", "test_indexing.py::test_advanced_indexing_with_negative_indices", "x[i, :, j]"),
    (A + "index_select", "test_indexing.py::test_index_select_with_duplicates", "torch.index_select("),
    (A + "gather", "test_indexing.py::test_gather_with_a_computed_index", "torch.gather("),
    # take_along_dim: a torch.operator fusion-decompose expands into a gather (torch.compile's graphs: already one)
    (A + "gather", "test_indexing.py::test_take_along_dim_wraps_indices_like_eager", "torch.take_along_dim("),
    (A + "select_scatter", "test_indexing.py::test_slice_and_select_scatter", "torch.select_scatter("),
    (A + "slice_scatter", "test_indexing.py::test_slice_and_select_scatter", "torch.slice_scatter("),
    (A + "index_put", "test_indexing.py::test_index_put_accumulate_duplicates_and_negatives", "torch.index_put("),
    (A + "scatter.src", "test_indexing.py::test_scatter_src_and_value", "x.scatter(1, i, s * 2)"),
    (A + "scatter.value", "test_indexing.py::test_scatter_src_and_value", "x.scatter(1, i, 2.5)"),
    (A + "scatter_add", "test_indexing.py::test_scatter_add_duplicates_with_fused_source", ".scatter_add("),
    (A + "where.self", "test_elementwise_numerics.py::SELECT", "torch.where(x > 0, x, y)"),
    (A + "masked_fill.Scalar", "test_indexing.py::test_causal_mask_softmax_is_one_kernel", ".masked_fill(mask"),
    (A + "masked_fill.Tensor", "test_elementwise_completeness.py::test_masked_fill_with_tensor_value", "masked_fill(m, torch.tensor"),
    # creation (fill_ with a tensor value is imported as expand + clone: test_fill_with_a_tensor_value)
    (A + "arange", "test_indexing.py::CREATION_OPS", "torch.arange(6)"),
    (A + "arange.start", "test_indexing.py::CREATION_OPS", "torch.arange(1, 7)"),
    (A + "arange.start_step", "test_indexing.py::CREATION_OPS", "torch.arange(0.5, 2.0, 0.5)"),
    (A + "full", "test_indexing.py::CREATION_OPS", "torch.full("),
    (A + "full_like", "test_indexing.py::CREATION_OPS", "torch.full_like("),
    (A + "zeros", "test_indexing.py::CREATION_OPS", "torch.zeros(6)"),
    (A + "ones", "test_indexing.py::CREATION_OPS", "torch.ones(4, 1)"),
    (A + "zeros_like", "test_indexing.py::CREATION_OPS", "torch.zeros_like("),
    (A + "ones_like", "test_indexing.py::CREATION_OPS", "torch.ones_like("),
    (A + "eye", "test_indexing.py::CREATION_OPS", "torch.eye(4)"),
    (A + "eye.m", "test_indexing.py::CREATION_OPS", "torch.eye(4, 6)"),
    (A + "tril", "test_indexing.py::CREATION_OPS", "torch.tril("),
    (A + "triu", "test_indexing.py::CREATION_OPS", "torch.triu("),
    (A + "fill.Scalar", "test_indexing.py::test_fill_of_a_clone", "y.fill_(3.0)"),
    # pooling
    (A + "avg_pool1d", "test_pooling.py::test_avg_pool_padding_ceil_mode_divisor", "F.avg_pool1d("),
    (A + "avg_pool2d", "test_pooling.py::test_avg_pool_padding_ceil_mode_divisor", "F.avg_pool2d("),
    (A + "avg_pool3d", "test_pooling.py::test_avg_pool_padding_ceil_mode_divisor", "F.avg_pool3d("),
    (A + "max_pool1d", "test_pooling.py::test_max_pool1d_and_3d_with_indices_bf16", "F.max_pool1d(a, 3, dilation=3)"),
    (A + "max_pool2d", "test_pooling.py::test_max_pool2d_with_indices_nan_inf_ties_and_epilogue", "F.max_pool2d(x, 2, ceil_mode=True)"),
    (A + "max_pool3d", "test_pooling.py::test_max_pool1d_and_3d_with_indices_bf16", "F.max_pool3d(b, 2, dilation"),
    (A + "max_pool1d_with_indices", "test_pooling.py::test_max_pool1d_and_3d_with_indices_bf16", "return_indices=True"),
    (A + "max_pool2d_with_indices", "test_pooling.py::test_max_pool2d_with_indices_nan_inf_ties_and_epilogue", "return_indices=True"),
    (A + "max_pool3d_with_indices", "test_pooling.py::test_max_pool1d_and_3d_with_indices_bf16", "return_indices=True"),
    (A + "adaptive_avg_pool1d", "test_pooling.py::test_adaptive_pools_odd_sizes", "F.adaptive_avg_pool1d("),
    (A + "adaptive_avg_pool2d", "test_pooling.py::test_adaptive_pools_odd_sizes", "F.adaptive_avg_pool2d("),
    (A + "adaptive_avg_pool3d", "test_pooling.py::test_adaptive_pools_odd_sizes", "F.adaptive_avg_pool3d("),
    (A + "_adaptive_avg_pool2d", "test_pooling.py::test_underscore_adaptive_avg_pool_spellings", "_adaptive_avg_pool2d("),
    (A + "_adaptive_avg_pool3d", "test_pooling.py::test_underscore_adaptive_avg_pool_spellings", "_adaptive_avg_pool3d("),
    (A + "adaptive_max_pool1d", "test_pooling.py::test_adaptive_pools_odd_sizes", "F.adaptive_max_pool1d("),
    (A + "adaptive_max_pool2d", "test_pooling.py::test_adaptive_pools_odd_sizes", "F.adaptive_max_pool2d("),
    (A + "adaptive_max_pool3d", "test_pooling.py::test_adaptive_pools_odd_sizes", "F.adaptive_max_pool3d("),
    # elementwise completeness
    (A + "remainder.Tensor", "test_elementwise_completeness.py::test_integer_division_family", "torch.remainder(a, b)"),
    (A + "remainder.Scalar", "test_elementwise_completeness.py::test_integer_division_family", "a % 3"),
    (A + "floor_divide", "test_elementwise_completeness.py::test_float_division_family", "torch.floor_divide(a, b)"),
    (A + "atan2", "test_elementwise_completeness.py::test_atan2_quadrants_and_zeros", "torch.atan2"),
    (A + "pow.Scalar", "test_elementwise_completeness.py::test_float_pow", "torch.pow(2.0, y)"),
    (A + "pow.Tensor_Tensor", "test_elementwise_completeness.py::test_float_pow", "torch.pow(x, y)"),
    (A + "pow.Tensor_Scalar", "test_elementwise_completeness.py::test_integer_pow", "a**5"),
    (A + "bitwise_and.Tensor", "test_elementwise_completeness.py::test_bitwise_tensor_ops", "torch.bitwise_and(a, b)"),
    (A + "bitwise_or.Tensor", "test_elementwise_completeness.py::test_bitwise_tensor_ops", "torch.bitwise_or(a, b)"),
    (A + "bitwise_xor.Tensor", "test_elementwise_completeness.py::test_bitwise_tensor_ops", "torch.bitwise_xor(a, b)"),
    (A + "bitwise_not", "test_elementwise_completeness.py::test_bitwise_tensor_ops", "torch.bitwise_not(a)"),
    (A + "bitwise_left_shift.Tensor", "test_elementwise_completeness.py::test_bitwise_scalar_and_shifts", "torch.bitwise_left_shift(a, s)"),
    (A + "bitwise_right_shift.Tensor", "test_elementwise_completeness.py::test_bitwise_scalar_and_shifts", "torch.bitwise_right_shift(a, s)"),
    (A + "__lshift__.Scalar", "test_elementwise_completeness.py::test_bitwise_scalar_and_shifts", "a << 3"),
    (A + "__rshift__.Tensor", "test_elementwise_completeness.py::test_bitwise_scalar_and_shifts", "a >> s"),
    (A + "clamp", "test_elementwise_numerics.py::UNARY", "torch.clamp(x, -0.5, 0.5)"),
    (A + "clamp.Tensor", "test_elementwise_completeness.py::test_clamp_with_tensor_bounds", "torch.clamp(x, lo, hi)"),
    (A + "nan_to_num", "test_elementwise_completeness.py::test_classification_and_sign", "torch.nan_to_num(x, 1.0, 2.0, -2.0)"),
    (A + "copysign.Tensor", "test_elementwise_completeness.py::test_classification_and_sign", "torch.copysign(x, y)"),
    (A + "copysign.Scalar", "test_elementwise_completeness.py::test_classification_and_sign", "torch.copysign(x, -1.0)"),
    # pads and cat
    (A + "cat", "test_pad.py::test_cat_of_inputs_fused_with_consumer", "torch.cat("),
    (A + "constant_pad_nd", "test_pad.py::test_constant_pad_nd_of_a_transposed_view", "torch.constant_pad_nd("),
    (A + "pad", "test_pad.py::test_reflect_and_replicate", "F.pad(x, (2, 3, 1, 2), mode=mode)"),
    (A + "reflection_pad1d", "test_pad.py::test_reflection_and_replication_pad_ops", "reflection_pad1d("),
    (A + "reflection_pad2d", "test_pad.py::test_reflection_and_replication_pad_ops", "reflection_pad2d("),
    (A + "reflection_pad3d", "test_pad.py::test_reflection_and_replication_pad_ops", "reflection_pad3d("),
    (A + "replication_pad1d", "test_pad.py::test_reflection_and_replication_pad_ops", "replication_pad1d("),
    (A + "replication_pad2d", "test_pad.py::test_reflection_and_replication_pad_ops", "replication_pad2d("),
    (A + "replication_pad3d", "test_pad.py::test_reflection_and_replication_pad_ops", "replication_pad3d("),
]

# Ops the fuser takes in every form a real import gives them (any dtype eager accepts, `?` sizes,
# any operand): there is no limit for a no_fuse case to show.
NO_LIMIT = {
    **dict.fromkeys(
        [A + n for n in ("bitwise_and.Tensor", "bitwise_or.Tensor", "bitwise_xor.Tensor", "bitwise_not",
                         "bitwise_left_shift.Tensor", "bitwise_right_shift.Tensor", "__rshift__.Tensor",
                         "remainder.Tensor", "floor_divide", "pow.Tensor_Tensor", "atan2", "clamp", "clamp.Tensor",
                         "copysign.Tensor", "copysign.Scalar")],
        "elementwise rule with no dtype, shape or constant check that an eager-valid import can fail",
    ),
    **dict.fromkeys(
        [A + n for n in ("where.self", "masked_fill.Scalar", "masked_fill.Tensor")],
        "elementwise select, fused for every dtype and `?` sizes",
    ),
}

_FUNC = re.compile(r"^func\.func @(\w+)", re.M)


def _mentions(text: str, op: str) -> bool:
    """`op` in `text` as a whole op name (not a prefix of a longer one: full vs full_like, max_pool2d vs ..._with_indices)."""
    return re.search(re.escape(op) + r"(?![\w.])", text) is not None


@cache
def lit_cases() -> list[tuple[str, str, str, str]]:
    """(file, function name, function body, the FileCheck lines of its split-input-file case)."""
    out = []
    for path in sorted(LIT.glob("*.mlir")):
        for case in path.read_text().split("\n// -----\n"):
            checks = "\n".join(line for line in case.splitlines() if re.match(r"\s*// CHECK", line))
            code = "\n".join(line for line in case.splitlines() if not line.lstrip().startswith("//"))
            starts = [(m.start(), m.group(1)) for m in _FUNC.finditer(code)] + [(len(code), None)]
            for (start, name), (end, _) in zip(starts, starts[1:]):
                out.append((path.name, name, code[start:end], checks))
    return out


def fused_in_lit(op: str) -> list[str]:
    """@fuse_* functions holding `op` whose checks name it after a fusion.group (inside the group)."""
    found = []
    for file, name, body, checks in lit_cases():
        if name.startswith("fuse_") and _mentions(body, op):
            after_group = checks.partition("fusion.group")[2]
            if _mentions(after_group, op):
                found.append(f"{file}:@{name}")
    return found


def limited_in_lit(op: str) -> list[str]:
    """@no_fuse_* functions holding `op` whose checks name it."""
    return [f"{file}:@{name}" for file, name, body, checks in lit_cases()
            if name.startswith("no_fuse_") and _mentions(body, op) and _mentions(checks, op)]


@cache
def _top_level(file: str) -> dict[str, str]:
    source = (ROOT / "tests" / file).read_text()
    lines, nodes = source.splitlines(), {}
    for node in ast.parse(source).body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        text = "\n".join(lines[first - 1 : node.end_lineno])  # with the decorators (parametrize reads tables)
        if isinstance(node, ast.FunctionDef):
            nodes[node.name] = text
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            nodes[node.targets[0].id] = text
    return nodes


def numeric_test(ref: str, call: str) -> str | None:
    """Why `ref` (file::name) is not a numeric test calling `call`; None if it is."""
    file, _, name = ref.partition("::")
    nodes = _top_level(file)
    if name not in nodes:
        return f"{ref} does not exist"
    if not name.startswith("test_") and not any(re.search(rf"\b{name}\b", src) for key, src in nodes.items() if key.startswith("test_")):
        return f"{ref} is a table no test function reads"
    return None if call in nodes[name] else f"{ref} does not call {call!r}"


OPS = sorted({op for op, _, _ in ITEM5})


@pytest.mark.parametrize("op", OPS)
def test_fused_in_a_lit_case(op):
    assert fused_in_lit(op), f"no @fuse_* case in {LIT.relative_to(ROOT)} checks {op} inside a fusion.group"


@pytest.mark.parametrize("op", OPS)
def test_limit_in_a_lit_case(op):
    if op in NO_LIMIT:
        assert not limited_in_lit(op), f"{op} is in NO_LIMIT, yet {limited_in_lit(op)} show a limit: drop it from NO_LIMIT"
        return
    assert limited_in_lit(op), f"no @no_fuse_* case shows a limit of {op} (or say in NO_LIMIT why it has none)"


@pytest.mark.parametrize("op, ref, call", ITEM5, ids=[f"{op.removeprefix(A)}:{call}" for op, _, call in ITEM5])
def test_numeric_test_against_eager(op, ref, call):
    why = numeric_test(ref, call)
    assert why is None, f"{op}: {why}"


def test_the_checks_can_fail():
    # The lit scan rejects an op no case holds, a prefix of a held op, and a case whose checks miss the op.
    assert not fused_in_lit(A + "not_an_op")
    assert not fused_in_lit(A + "max_pool")  # only max_pool1d, max_pool2d_with_indices, ... exist
    assert fused_in_lit(A + "full") and fused_in_lit(A + "full_like")
    assert numeric_test("test_indexing.py::test_no_such_test", "x") is not None
    assert numeric_test("test_indexing.py::test_slice_and_select_scatter", "torch.no_such_op(") is not None
    assert set(NO_LIMIT) <= set(OPS), sorted(set(NO_LIMIT) - set(OPS))

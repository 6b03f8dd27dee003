"""What the decompositions share: a shape-aware op builder."""

from __future__ import annotations

from mlirfuse.ir import DTYPE_CODES, TorchBuilder, ir
from mlirfuse.ops.reductions import reduced_shape


class Builder(TorchBuilder):
    """TorchBuilder plus the handful of ATen ops the decompositions use, shape-aware."""

    def __init__(self, op):
        super().__init__(ir.InsertionPoint(op), op.location)

    def binary(self, name, a, b, shape, dtype):
        operands = [a, b] + ([self.int(1)] if name in ("torch.aten.add.Tensor", "torch.aten.sub.Tensor") else [])
        return self.op(name, operands, shape, dtype)

    def unary(self, name, a, shape, dtype):
        return self.op(name, [a], shape, dtype)

    def add_scalar(self, a, value: float, shape, dtype):
        return self.op("torch.aten.add.Scalar", [a, self.float(value), self.int(1)], shape, dtype)

    def addcmul(self, a, t1, t2, value: int, shape, dtype):
        return self.op("torch.aten.addcmul", [a, t1, t2, self.int(value)], shape, dtype)

    def reduce(self, name, x, dims, shape, dtype, keepdim=True):
        reduced = reduced_shape(shape, dims, keepdim)
        operands = [x, self.int_list(dims), self.bool(keepdim)]
        if name not in ("torch.aten.amax", "torch.aten.amin"):
            operands.append(self.none())
        return self.op(name, operands, reduced, dtype), reduced

    def convert(self, x, shape, dtype):
        return self.op("torch.prims.convert_element_type", [x, self.int(DTYPE_CODES[dtype])], shape, dtype)

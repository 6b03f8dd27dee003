# RUN: %PYTHON %s | filecheck %s

# The frontend decomposes the composite ops Inductor decomposes and mlirfuse
# does not handle whole (frontend/decompositions.py): linalg_vector_norm
# becomes pow/sum/pow, divide a div, round(decimals=) mul/round/mul, while
# softmax, layer_norm and gelu (fused by mlirfuse's own rules) stay whole.
# A graph without such an op is imported as it always was.

import torch
import torch.nn.functional as F

from mlirfuse.frontend.importer import import_module


class Composite(torch.nn.Module):
    def forward(self, x, y):
        z = torch.divide(x, y) + torch.round(x, decimals=2)
        return F.gelu(F.layer_norm(torch.softmax(z, -1), (8,))) * torch.linalg.vector_norm(x, dim=-1, keepdim=True)


class Plain(torch.nn.Module):
    def forward(self, x, y):
        return F.gelu(torch.softmax(x / y, -1))


x, y = torch.randn(2, 8), torch.rand(2, 8) + 1
print(import_module(Composite(), (x, y)).module)
print(import_module(Plain(), (x, y)).module)

# CHECK-LABEL: func.func @forward
# CHECK-NOT:     torch.aten.divide
# CHECK:         torch.aten.div.Tensor %arg0, %arg1
# CHECK:         torch.aten.mul.Scalar %arg0
# CHECK:         torch.aten.round
# CHECK:         torch.aten.softmax.int
# CHECK:         torch.aten.layer_norm
# CHECK:         torch.aten.gelu
# CHECK:         torch.aten.pow.Tensor_Scalar %arg0
# CHECK:         torch.aten.sum.dim_IntList
# CHECK:         torch.aten.pow.Tensor_Scalar
# CHECK-NOT:     torch.aten.linalg_vector_norm
# CHECK:         return

# CHECK-LABEL: func.func @forward
# CHECK:         torch.aten.div.Tensor %arg0, %arg1
# CHECK:         torch.aten.softmax.int
# CHECK:         torch.aten.gelu
# CHECK:         return

# RUN: %PYTHON %s | filecheck %s

# Real importer output, not hand-written IR: a Linear + GELU + residual block
# goes through torch_mlir.fx.export_and_import, then through the mlirfuse
# pipeline built programmatically, as an embedding compiler would run it.

import torch
from torch_mlir import fx

from mlirfuse.dialect import make_context
from mlirfuse.ir import ir
from mlirfuse.passes.pipeline import build_pass_manager


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(16, 16)
        self.act = torch.nn.GELU()

    def forward(self, x):
        return self.act(self.linear(x)) + x


torch.manual_seed(0)
imported = fx.export_and_import(Block().eval(), torch.randn(4, 16), func_name="block")
# The weights are dense_resource literals; elide their bytes when printing.
print(imported.operation.get_asm(large_resource_limit=16))

# CHECK-LABEL: func.func @block(%arg0: !torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,16],f32>
# CHECK:         torch.aten.mm %arg0
# CHECK:         torch.aten.gelu
# CHECK:         torch.aten.add.Tensor %{{.+}}, %arg0
# CHECK-NOT:     fusion.

# The imported module lives in torch-mlir's own context; mlirfuse works in a
# context of its own (torch + fusion dialects), so the module crosses as text.
print("// ----- after mlirfuse-pipeline")
ctx = make_context()
with ctx, ir.Location.unknown():
    module = ir.Module.parse(str(imported))
    pm = build_pass_manager("builtin.module(mlirfuse-pipeline)", ctx)
    pm.run(module.operation)
    print(module.operation.get_asm(large_resource_limit=16))

# One GEMM kernel (fusion-fuse-matmul): the weight's transpose read by
# strides, the matmul, and its epilogue (bias add, GELU, residual add
# reading the block's input); the function is one launch.
# CHECK-LABEL: // ----- after mlirfuse-pipeline
# CHECK:         "fusion.kernel"() ({
# CHECK:           %[[T:.+]] = torch.aten.permute
# CHECK:           torch.aten.mm %{{.+}}, %[[T]]
# CHECK:           torch.aten.gelu
# CHECK:           torch.aten.add.Tensor
# CHECK:         }) {kind = "matmul", sym_name = "[[KERNEL:fused_[a-z_]+_[0-9]+]]"} : () -> ()
# CHECK-LABEL: func.func @block(%arg0: !torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,16],f32>
# CHECK-NOT:     torch.aten
# CHECK:         %[[OUT:.+]] = "fusion.launch"({{.*}}%arg0{{.*}}) {kernel = @[[KERNEL]]}
# CHECK-NOT:     torch.aten
# CHECK:         return %[[OUT]]

// RUN: mlirfuse-opt %s --split-input-file | filecheck %s
// Without splitting, the two @same functions collide in one module.
// RUN: not mlirfuse-opt %s 2>&1 | filecheck %s --check-prefix=NOSPLIT

// Each chunk is parsed and printed as its own module; outputs are joined by
// the same marker.

// CHECK:       module {
// CHECK-NEXT:    func.func @same(%{{.+}}: !torch.vtensor<[8],f32>)
// CHECK-NEXT:      return
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NEXT:  // -----
// CHECK-NEXT:  module {
// CHECK-NEXT:    func.func @same(%{{.+}}: !torch.vtensor<[4],f32>)
// CHECK-NEXT:      return
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NEXT:  // -----
// CHECK-NEXT:  module {
// CHECK-NEXT:    func.func @other
// CHECK-NOT:   // -----

// NOSPLIT: split-input-file.mlir:32:1: error: redefinition of symbol named 'same'

func.func @same(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  return %arg0 : !torch.vtensor<[8],f32>
}

// -----

func.func @same(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  return %arg0 : !torch.vtensor<[4],f32>
}

// -----

func.func @other() {
  return
}

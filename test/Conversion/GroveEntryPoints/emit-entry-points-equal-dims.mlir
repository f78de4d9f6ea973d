// RUN: grove-opt %s --grove-to-host | FileCheck %s

// Sizes of two inputs the code takes as equal (grove.abi.equal_dims, from
// convert-grove-to-linalg) become `equal` clauses of the later input in the
// descriptor grove-emit-entry-points embeds; the attribute is consumed and
// no check is left in the code.
// CHECK-NOT: grove.abi.equal_dims
// CHECK-NOT: grove_rt_dim_mismatch
// CHECK: llvm.mlir.global internal constant @_grove.pair.desc
// CHECK-SAME: input a f32 1 -1\0Ainput b f32 1 -1 equal 0 0 0\0A
// CHECK-NOT: grove.abi.equal_dims
// CHECK-NOT: grove_rt_dim_mismatch
module @pair {
  func.func @add(%a: tensor<?xf32> {grove.name = "a"},
                 %b: tensor<?xf32> {grove.name = "b"}) -> tensor<?xf32> {
    %0 = grove.add %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    return %0 : tensor<?xf32>
  }
}

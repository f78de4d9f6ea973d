// RUN: grove-opt %s --grove-to-host | FileCheck %s

// Sizes of two inputs the code takes as equal (grove.abi.equal_dims, from
// convert-grove-to-linalg) become `equal_dim` preconditions of the later
// input in the descriptor grove-emit-entry-points embeds; the attribute is
// consumed and no check is left in the code.
// CHECK-NOT: grove.abi.equal_dims
// CHECK-NOT: grove_rt_dim_mismatch
// CHECK: llvm.mlir.global internal constant @_grove.pair.desc
// CHECK-SAME: {\22name\22:\22a\22,\22dtype\22:\22f32\22,\22shape\22:[-1]},\0A{\22name\22:\22b\22,\22dtype\22:\22f32\22,\22shape\22:[-1],\22preconditions\22:[{\22kind\22:\22equal_dim\22,\22dim\22:0,\22input\22:0,\22input_dim\22:0}]}]
// CHECK-NOT: grove.abi.equal_dims
// CHECK-NOT: grove_rt_dim_mismatch
module @pair {
  func.func @add(%a: tensor<?xf32> {grove.name = "a"},
                 %b: tensor<?xf32> {grove.name = "b"}) -> tensor<?xf32> {
    %0 = grove.add %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    return %0 : tensor<?xf32>
  }
}

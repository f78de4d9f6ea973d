// RUN: grove-opt %s -split-input-file --grove-common | FileCheck %s
// RUN: grove-opt %s -split-input-file --grove-to-host | FileCheck %s --check-prefix=HOST

// State through the shared stages: a written state argument is the
// context's buffer, written after every allocation of the call (so an
// out-of-memory abandon leaves state as it was): by the loop computing it
// when that loop computes nothing else (the count), else by one copy of the
// final value (the mean, whose loop also gives the batch mean returned);
// read-only state and inputs are never written.

// CHECK-LABEL: func.func @_grove_s_update(
// CHECK-SAME: %[[M:[^:]*]]: memref<4xf32> {grove.state = @mean, grove.writes},
// CHECK-SAME: %[[C:[^:]*]]: memref<f32> {grove.state = @count, grove.writes},
// CHECK-SAME: %[[X:[^:]*]]: memref<?x4xf32> {grove.name = "x"})
// CHECK: memref.alloc
// CHECK: linalg.generic {{.*}} ins(%[[C]] : memref<f32>) outs(%[[C]] : memref<f32>)
// CHECK-NOT: memref.alloc
// CHECK: memref.copy %{{.*}}, %[[M]] : memref<4xf32> to memref<4xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: return
// CHECK-LABEL: func.func @_grove_s_forward(
// CHECK-SAME: %[[FM:[^:]*]]: memref<4xf32> {grove.state = @mean},
// CHECK-NOT: memref.copy
// CHECK: return

// After lowering no grove op or attribute is left; the state copy is a
// memcpy into the argument's buffer.
// HOST-LABEL: module @s
// HOST-NOT: grove.assign
// HOST-NOT: grove.state
// HOST: "llvm.intr.memcpy"
module @s {
  grove.param @mean : tensor<4xf32> = 0.0 : f32
  grove.param @count : tensor<f32> = 0.0 : f32
  func.func @update(%x: tensor<?x4xf32> {grove.name = "x"})
      -> (tensor<4xf32> {grove.name = "batch_mean"}) {
    %m = grove.get_param @mean : tensor<4xf32>
    %bm = grove.reduce_mean %x {axes = array<i64: 0>}
        : tensor<?x4xf32> -> tensor<4xf32>
    %new = grove.add %m, %bm : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    grove.set_param @mean = %new : tensor<4xf32>
    %c = grove.get_param @count : tensor<f32>
    %one = grove.constant dense<1.0> : tensor<f32>
    %c1 = grove.add %c, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
    grove.set_param @count = %c1 : tensor<f32>
    return %bm : tensor<4xf32>
  }
  func.func @forward(%x: tensor<?x4xf32> {grove.name = "x"})
      -> (tensor<?x4xf32> {grove.name = "y"}) {
    %m = grove.get_param @mean : tensor<4xf32>
    %y = grove.sub %x, %m : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
    return %y : tensor<?x4xf32>
  }
}

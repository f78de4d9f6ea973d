// RUN: grove-opt %s --grove-to-host | FileCheck %s

// Zero-size tensors compile through the whole host pipeline: convolutions
// and pools with a static zero batch or channel count, a flatten or reshape
// of a static zero next to a dynamic size, elementwise ops on `?x0` (each failed inside upstream passes
// before their lowerings made them empty tensors).

// CHECK-LABEL: llvm.func internal @_grove_model_conv_batch0
// CHECK-NOT: grove_rt_conv2d
// CHECK: llvm.return
func.func @conv_batch0(%x: tensor<0x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<0x4x8x8xf32> {
  %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<0x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<0x4x8x8xf32>
  return %0 : tensor<0x4x8x8xf32>
}

// CHECK-LABEL: llvm.func internal @_grove_model_pools_empty
// CHECK: llvm.return
func.func @pools_empty(%x: tensor<0x2x4x4xf32>, %y: tensor<1x0x4x4xf32>) -> (tensor<0x2x2x2xf32>, tensor<1x0x2x2xf32>) {
  %0 = grove.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad} : (tensor<0x2x4x4xf32>) -> tensor<0x2x2x2xf32>
  %1 = grove.max_pool2d %y {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x0x4x4xf32>) -> tensor<1x0x2x2xf32>
  return %0, %1 : tensor<0x2x2x2xf32>, tensor<1x0x2x2xf32>
}

// CHECK-LABEL: llvm.func internal @_grove_model_flatten_zero
// CHECK: llvm.return
func.func @flatten_zero(%x: tensor<2x0x?xf32>) -> tensor<2x?xf32> {
  %0 = grove.flatten %x {axis = 1 : i64} : (tensor<2x0x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// CHECK-LABEL: llvm.func internal @_grove_model_dynamic_next_to_zero
// CHECK: llvm.return
func.func @dynamic_next_to_zero(%x: tensor<?x0xf32>, %y: tensor<0x?xbf16>) -> (tensor<?x0xf32>, tensor<?x5xf32>, tensor<0x?xbf16>) {
  %0 = grove.relu %x : tensor<?x0xf32>
  %1 = grove.add %0, %x : (tensor<?x0xf32>, tensor<?x0xf32>) -> tensor<?x0xf32>
  %2 = grove.reshape %x : tensor<?x0xf32> -> tensor<?x5xf32>
  %3 = grove.sigmoid %y : tensor<0x?xbf16>
  return %1, %2, %3 : tensor<?x0xf32>, tensor<?x5xf32>, tensor<0x?xbf16>
}

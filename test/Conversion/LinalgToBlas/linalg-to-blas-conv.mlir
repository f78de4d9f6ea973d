// RUN: grove-opt %s -split-input-file --convert-linalg-to-blas | FileCheck %s

// convert-linalg-to-blas{target=host} (LinalgToBlas.cpp): f32 memref
// convolutions whose output is zero-filled right before them become
// grove_rt_conv2d_f32 (abi.h; oneDNN's convolution) on 5-D views in linalg's
// grouped form, then the strides and the dilations as i64. The zero fill is
// erased (the service writes its result over the output). The CUDA target's
// cuDNN service: linalg-to-blas-cuda-conv.mlir.

// Ungrouped: a unit group dimension is inserted into each view (after the
// batch of the input and the result, before the filters of the weights).
// CHECK-LABEL: func.func @nchw(
// CHECK-SAME: %[[X:.*]]: memref<2x3x10x10xf32>, %[[W:.*]]: memref<8x3x3x3xf32>, %[[Y:.*]]: memref<2x8x4x4xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[VX:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [2, 1, 3, 10, 10], strides: [300, 0, 100, 10, 1] : memref<2x3x10x10xf32> to memref<?x?x?x?x?xf32, strided<[?, ?, ?, ?, ?], offset: ?>>
// CHECK: %[[VW:.*]] = memref.reinterpret_cast %[[W]] to offset: [0], sizes: [1, 8, 3, 3, 3], strides: [0, 27, 9, 3, 1]
// CHECK: %[[VY:.*]] = memref.reinterpret_cast %[[Y]] to offset: [0], sizes: [2, 1, 8, 4, 4], strides: [128, 0, 16, 4, 1]
// CHECK: %[[SH:.*]] = arith.constant 2 : i64
// CHECK: %[[SW:.*]] = arith.constant 2 : i64
// CHECK: %[[DH:.*]] = arith.constant 1 : i64
// CHECK: %[[DW:.*]] = arith.constant 1 : i64
// CHECK: call @grove_rt_conv2d_f32(%[[VX]], %[[VW]], %[[VY]], %[[SH]], %[[SW]], %[[DH]], %[[DW]])
// CHECK-NOT: linalg.conv
func.func @nchw(%x: memref<2x3x10x10xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x8x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x8x4x4xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<2x3x10x10xf32>, memref<8x3x3x3xf32>) outs(%y : memref<2x8x4x4xf32>)
  return
}

// -----

// Grouped: the 5-D operands as they are, dilations passed through.
// CHECK-LABEL: func.func @grouped(
// CHECK-SAME: %[[X:.*]]: memref<?x2x4x9x9xf32>, %[[W:.*]]: memref<2x6x4x3x3xf32>, %[[Y:.*]]: memref<?x2x6x5x5xf32>)
// CHECK-NOT: linalg.fill
// CHECK-NOT: memref.reinterpret_cast
// CHECK: %[[CX:.*]] = memref.cast %[[X]]
// CHECK: %[[CW:.*]] = memref.cast %[[W]]
// CHECK: %[[CY:.*]] = memref.cast %[[Y]]
// CHECK: %[[S:.*]] = arith.constant 1 : i64
// CHECK: %[[S2:.*]] = arith.constant 1 : i64
// CHECK: %[[D:.*]] = arith.constant 2 : i64
// CHECK: %[[D2:.*]] = arith.constant 2 : i64
// CHECK: call @grove_rt_conv2d_f32(%[[CX]], %[[CW]], %[[CY]], %[[S]], %[[S2]], %[[D]], %[[D2]])
func.func @grouped(%x: memref<?x2x4x9x9xf32>, %w: memref<2x6x4x3x3xf32>, %y: memref<?x2x6x5x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<?x2x6x5x5xf32>)
  linalg.conv_2d_ngchw_gfchw {strides = dense<1> : tensor<2xi64>, dilations = dense<2> : tensor<2xi64>}
    ins(%x, %w : memref<?x2x4x9x9xf32>, memref<2x6x4x3x3xf32>) outs(%y : memref<?x2x6x5x5xf32>)
  return
}

// -----

// An output that is not zero-filled first: the convolution adds to it, which
// the service does not, so it stays linalg (and becomes loops).
// CHECK-LABEL: func.func @accumulates(
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK-NOT: call
func.func @accumulates(%x: memref<1x3x6x6xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x4x4xf32>) {
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x3x6x6xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x4x4xf32>)
  return
}

// -----

// A fill of another value, and a fill that is not right before it: both
// keep the convolution.
// CHECK-LABEL: func.func @not_zero_filled(
// CHECK: linalg.fill
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK: linalg.fill
// CHECK: memref.copy
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK-NOT: call
func.func @not_zero_filled(%x: memref<1x3x6x6xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x4x4xf32>, %z: memref<1x4x4x4xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%y : memref<1x4x4x4xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x3x6x6xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x4x4xf32>)
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%z : memref<1x4x4x4xf32>)
  memref.copy %y, %y : memref<1x4x4x4xf32> to memref<1x4x4x4xf32>
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x3x6x6xf32>, memref<4x3x3x3xf32>) outs(%z : memref<1x4x4x4xf32>)
  return
}

// -----

// Not f32: the service is f32 only.
// CHECK-LABEL: func.func @f16(
// CHECK: linalg.fill
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK-NOT: call
func.func @f16(%x: memref<1x3x6x6xf16>, %w: memref<4x3x3x3xf16>, %y: memref<1x4x4x4xf16>) {
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<1x4x4x4xf16>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x3x6x6xf16>, memref<4x3x3x3xf16>) outs(%y : memref<1x4x4x4xf16>)
  return
}

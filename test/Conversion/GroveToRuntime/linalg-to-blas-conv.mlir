// RUN: grove-opt %s -split-input-file --convert-linalg-to-blas | FileCheck %s

// convert-linalg-to-blas{target=host} (LinalgToBlas.cpp): f32 memref
// convolutions whose output is zero-filled right before them become
// grove_rt_conv2d_f32 (abi.h; oneDNN's convolution) on 5-D views in linalg's
// grouped form, then the padding (top, left, bottom, right), the strides and
// the dilations as i64. A zero padding the compiler materialised is folded
// into the call, asymmetric too (oneDNN pads by itself). The zero fill is
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
// CHECK-COUNT-4: arith.constant 0 : i64
// CHECK: %[[SH:.*]] = arith.constant 2 : i64
// CHECK: %[[SW:.*]] = arith.constant 2 : i64
// CHECK: %[[DH:.*]] = arith.constant 1 : i64
// CHECK: %[[DW:.*]] = arith.constant 1 : i64
// CHECK: call @grove_rt_conv2d_f32(%[[VX]], %[[VW]], %[[VY]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SH]], %[[SW]], %[[DH]], %[[DW]])
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
// CHECK-COUNT-4: arith.constant 0 : i64
// CHECK: %[[S:.*]] = arith.constant 1 : i64
// CHECK: %[[S2:.*]] = arith.constant 1 : i64
// CHECK: %[[D:.*]] = arith.constant 2 : i64
// CHECK: %[[D2:.*]] = arith.constant 2 : i64
// CHECK: call @grove_rt_conv2d_f32(%[[CX]], %[[CW]], %[[CY]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[S]], %[[S2]], %[[D]], %[[D2]])
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

// -----

// A materialised asymmetric padding (top 0, left 1, bottom 1, right 0) is
// folded: the call reads the unpadded input, the padded buffer goes.
// CHECK-LABEL: func.func @folds_asymmetric_pad(
// CHECK-SAME: %[[X:.*]]: memref<?x3x8x9xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.map
// CHECK-NOT: linalg.copy
// CHECK: %[[VX:.*]] = memref.reinterpret_cast %[[X]]
// CHECK: %[[PT:.*]] = arith.constant 0 : i64
// CHECK: %[[PL:.*]] = arith.constant 1 : i64
// CHECK: %[[PB:.*]] = arith.constant 1 : i64
// CHECK: %[[PR:.*]] = arith.constant 0 : i64
// CHECK: call @grove_rt_conv2d_f32(%[[VX]], %{{.*}}, %{{.*}}, %[[PT]], %[[PL]], %[[PB]], %[[PR]],
func.func @folds_asymmetric_pad(%x: memref<?x3x8x9xf32>, %w: memref<5x3x2x3xf32>, %y: memref<?x5x4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x3x8x9xf32>
  %p = memref.alloc(%n) : memref<?x3x9x10xf32>
  linalg.map outs(%p : memref<?x3x9x10xf32>) (%init: f32) { linalg.yield %zero : f32 }
  %in = memref.subview %p[0, 0, 0, 1] [%n, 3, 8, 9] [1, 1, 1, 1] : memref<?x3x9x10xf32> to memref<?x3x8x9xf32, strided<[270, 90, 10, 1], offset: 1>>
  linalg.copy ins(%x : memref<?x3x8x9xf32>) outs(%in : memref<?x3x8x9xf32, strided<[270, 90, 10, 1], offset: 1>>)
  linalg.fill ins(%zero : f32) outs(%y : memref<?x5x4x8xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<[2, 1]> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %w : memref<?x3x9x10xf32>, memref<5x3x2x3xf32>) outs(%y : memref<?x5x4x8xf32>)
  return
}

// -----

// After deallocation (the host pipeline): the padded buffer's free goes
// with it, and the source's free, right after its last use (the copy), moves
// after the call, which now reads it.
// CHECK-LABEL: func.func @moves_source_free(
// CHECK: %[[S:.*]] = memref.alloc() : memref<1x3x6x6xf32>
// CHECK: linalg.fill {{.*}} outs(%[[S]]
// CHECK-NOT: memref.dealloc
// CHECK: %[[VX:.*]] = memref.reinterpret_cast %[[S]]
// CHECK: call @grove_rt_conv2d_f32(%[[VX]]
// CHECK-NEXT: memref.dealloc %[[S]] : memref<1x3x6x6xf32>
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @moves_source_free(%w: memref<4x3x3x3xf32>, %y: memref<1x4x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %s = memref.alloc() : memref<1x3x6x6xf32>
  linalg.fill ins(%two : f32) outs(%s : memref<1x3x6x6xf32>)
  %p = memref.alloc() : memref<1x3x8x8xf32>
  linalg.map outs(%p : memref<1x3x8x8xf32>) (%init: f32) { linalg.yield %zero : f32 }
  %in = memref.subview %p[0, 0, 1, 1] [1, 3, 6, 6] [1, 1, 1, 1] : memref<1x3x8x8xf32> to memref<1x3x6x6xf32, strided<[192, 64, 8, 1], offset: 9>>
  linalg.copy ins(%s : memref<1x3x6x6xf32>) outs(%in : memref<1x3x6x6xf32, strided<[192, 64, 8, 1], offset: 9>>)
  memref.dealloc %s : memref<1x3x6x6xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<1x4x6x6xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %w : memref<1x3x8x8xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x6x6xf32>)
  memref.dealloc %p : memref<1x3x8x8xf32>
  return
}

// -----

// Not folded: the source is chosen by a select (its buffer's frees and
// writes cannot be tracked through it), and a copy that converts f16 to
// f32 (the call would read the f16 source as f32).
// CHECK-LABEL: func.func @selected_source(
// CHECK: %[[P:.*]] = memref.alloc() : memref<1x3x8x8xf32>
// CHECK: %[[VX:.*]] = memref.reinterpret_cast %[[P]]
// CHECK-COUNT-4: arith.constant 0 : i64
// CHECK: call @grove_rt_conv2d_f32(%[[VX]]
func.func @selected_source(%a: memref<1x3x6x6xf32>, %b: memref<1x3x6x6xf32>, %c: i1, %w: memref<4x3x3x3xf32>, %y: memref<1x4x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %s = arith.select %c, %a, %b : memref<1x3x6x6xf32>
  %p = memref.alloc() : memref<1x3x8x8xf32>
  linalg.map outs(%p : memref<1x3x8x8xf32>) (%init: f32) { linalg.yield %zero : f32 }
  %in = memref.subview %p[0, 0, 1, 1] [1, 3, 6, 6] [1, 1, 1, 1] : memref<1x3x8x8xf32> to memref<1x3x6x6xf32, strided<[192, 64, 8, 1], offset: 9>>
  linalg.copy ins(%s : memref<1x3x6x6xf32>) outs(%in : memref<1x3x6x6xf32, strided<[192, 64, 8, 1], offset: 9>>)
  linalg.fill ins(%zero : f32) outs(%y : memref<1x4x6x6xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %w : memref<1x3x8x8xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x6x6xf32>)
  return
}

// CHECK-LABEL: func.func @converting_copy(
// CHECK: %[[P:.*]] = memref.alloc() : memref<1x3x8x8xf32>
// CHECK: linalg.copy
// CHECK: %[[VX:.*]] = memref.reinterpret_cast %[[P]]
// CHECK: call @grove_rt_conv2d_f32(%[[VX]]
func.func @converting_copy(%x: memref<1x3x6x6xf16>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<1x3x8x8xf32>
  linalg.map outs(%p : memref<1x3x8x8xf32>) (%init: f32) { linalg.yield %zero : f32 }
  %in = memref.subview %p[0, 0, 1, 1] [1, 3, 6, 6] [1, 1, 1, 1] : memref<1x3x8x8xf32> to memref<1x3x6x6xf32, strided<[192, 64, 8, 1], offset: 9>>
  linalg.copy ins(%x : memref<1x3x6x6xf16>) outs(%in : memref<1x3x6x6xf32, strided<[192, 64, 8, 1], offset: 9>>)
  linalg.fill ins(%zero : f32) outs(%y : memref<1x4x6x6xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %w : memref<1x3x8x8xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x6x6xf32>)
  return
}

// -----

// A dynamic batch: the padded buffer is sized by the memref.dim of the
// function's input, as the layer's buffers are, not of the copy's source;
// that source was allocated with the same size, so the padding still folds
// (before, it only did when the size was a memref.dim of the source itself).
// CHECK-LABEL: func.func @folds_with_batch_of_layer(
// CHECK: %[[S:.*]] = memref.alloc(%{{.*}}) : memref<?x3x6x6xf32>
// CHECK: linalg.copy ins(%{{.*}} : memref<?x3x6x6xf32>) outs(%[[S]] : memref<?x3x6x6xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.copy
// CHECK: %[[VX:.*]] = memref.reinterpret_cast %[[S]]
// CHECK: call @grove_rt_conv2d_f32(%[[VX]]
// CHECK-LABEL: func.func @other_batch_not_folded(
// CHECK: %[[P:.*]] = memref.alloc(%{{.*}}) : memref<?x3x8x8xf32>
// CHECK: linalg.copy {{.*}} outs(%{{.*}} : memref<?x3x6x6xf32, strided<[192, 64, 8, 1], offset: 9>>)
// CHECK: memref.reinterpret_cast %[[P]]
// CHECK: call @grove_rt_conv2d_f32
func.func @folds_with_batch_of_layer(%x: memref<?x3x6x6xf32>, %w: memref<4x3x3x3xf32>, %y: memref<?x4x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x3x6x6xf32>
  %s = memref.alloc(%n) : memref<?x3x6x6xf32>
  linalg.copy ins(%x : memref<?x3x6x6xf32>) outs(%s : memref<?x3x6x6xf32>)
  %p = memref.alloc(%n) : memref<?x3x8x8xf32>
  linalg.map outs(%p : memref<?x3x8x8xf32>) (%init: f32) { linalg.yield %zero : f32 }
  %in = memref.subview %p[0, 0, 1, 1] [%n, 3, 6, 6] [1, 1, 1, 1] : memref<?x3x8x8xf32> to memref<?x3x6x6xf32, strided<[192, 64, 8, 1], offset: 9>>
  linalg.copy ins(%s : memref<?x3x6x6xf32>) outs(%in : memref<?x3x6x6xf32, strided<[192, 64, 8, 1], offset: 9>>)
  linalg.fill ins(%zero : f32) outs(%y : memref<?x4x6x6xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %w : memref<?x3x8x8xf32>, memref<4x3x3x3xf32>) outs(%y : memref<?x4x6x6xf32>)
  return
}

// The padded buffer's batch is not provably the source's: kept.
func.func @other_batch_not_folded(%x: memref<?x3x6x6xf32>, %m: index, %w: memref<4x3x3x3xf32>, %y: memref<?x4x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x3x6x6xf32>
  %s = memref.alloc(%n) : memref<?x3x6x6xf32>
  linalg.copy ins(%x : memref<?x3x6x6xf32>) outs(%s : memref<?x3x6x6xf32>)
  %p = memref.alloc(%m) : memref<?x3x8x8xf32>
  linalg.map outs(%p : memref<?x3x8x8xf32>) (%init: f32) { linalg.yield %zero : f32 }
  %in = memref.subview %p[0, 0, 1, 1] [%n, 3, 6, 6] [1, 1, 1, 1] : memref<?x3x8x8xf32> to memref<?x3x6x6xf32, strided<[192, 64, 8, 1], offset: 9>>
  linalg.copy ins(%s : memref<?x3x6x6xf32>) outs(%in : memref<?x3x6x6xf32, strided<[192, 64, 8, 1], offset: 9>>)
  linalg.fill ins(%zero : f32) outs(%y : memref<?x4x6x6xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %w : memref<?x3x8x8xf32>, memref<4x3x3x3xf32>) outs(%y : memref<?x4x6x6xf32>)
  return
}

// RUN: grove-opt %s -split-input-file --convert-linalg-to-blas=target=cuda | FileCheck %s

// convert-linalg-to-blas{target=cuda} (GroveToRuntime/LinalgToBlasConv.cpp): memref
// convolutions of any float type whose output is zero-filled right before
// them become grove_rt_cuda_conv2d_<type> (abi.h; cuDNN) on 5-D views in
// linalg's grouped form, then pad_h, pad_w, the strides and the dilations
// as i64. A symmetric zero padding the compiler materialised (fresh
// buffer, zero fill, copy of the input into its interior) is folded into
// the call: the call reads the unpadded input and the padded buffer goes.

// Ungrouped f32, the padding as tensor.pad bufferizes it (linalg.map fill,
// linalg.copy into a subview): folded, pad 1 x 2.
// CHECK-LABEL: func.func @folds_pad(
// CHECK-SAME: %[[X:.*]]: memref<?x3x8x8xf32>, %[[W:.*]]: memref<4x3x3x5xf32>, %[[Y:.*]]: memref<?x4x8x8xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.map
// CHECK-NOT: linalg.copy
// CHECK-NOT: linalg.fill
// CHECK: %[[VX:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [%{{.*}}, 1, 3, 8, 8], strides: [192, 0, 64, 8, 1]
// CHECK: %[[VW:.*]] = memref.reinterpret_cast %[[W]] to offset: [0], sizes: [1, 4, 3, 3, 5], strides: [0, 45, 15, 5, 1]
// CHECK: %[[VY:.*]] = memref.reinterpret_cast %[[Y]]
// CHECK: %[[PH:.*]] = arith.constant 1 : i64
// CHECK: %[[PW:.*]] = arith.constant 2 : i64
// CHECK: %[[SH:.*]] = arith.constant 1 : i64
// CHECK: %[[SW:.*]] = arith.constant 1 : i64
// CHECK: %[[DH:.*]] = arith.constant 1 : i64
// CHECK: %[[DW:.*]] = arith.constant 1 : i64
// CHECK: call @grove_rt_cuda_conv2d_f32(%[[VX]], %[[VW]], %[[VY]], %[[PH]], %[[PW]], %[[SH]], %[[SW]], %[[DH]], %[[DW]])
// CHECK-NOT: linalg.conv
// CHECK: func.func private @grove_rt_cuda_conv2d_f32(memref<?x?x?x?x?xf32, strided<[?, ?, ?, ?, ?], offset: ?>>, memref<?x?x?x?x?xf32, strided<[?, ?, ?, ?, ?], offset: ?>>, memref<?x?x?x?x?xf32, strided<[?, ?, ?, ?, ?], offset: ?>>, i64, i64, i64, i64, i64, i64)
func.func @folds_pad(%x: memref<?x3x8x8xf32>, %w: memref<4x3x3x5xf32>, %y: memref<?x4x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x3x8x8xf32>
  %p = memref.alloc(%n) : memref<?x3x10x12xf32>
  linalg.map outs(%p : memref<?x3x10x12xf32>) (%init: f32) { linalg.yield %zero : f32 }
  %in = memref.subview %p[0, 0, 1, 2] [%n, 3, 8, 8] [1, 1, 1, 1] : memref<?x3x10x12xf32> to memref<?x3x8x8xf32, strided<[360, 120, 12, 1], offset: 14>>
  linalg.copy ins(%x : memref<?x3x8x8xf32>) outs(%in : memref<?x3x8x8xf32, strided<[360, 120, 12, 1], offset: 14>>)
  linalg.fill ins(%zero : f32) outs(%y : memref<?x4x8x8xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %w : memref<?x3x10x12xf32>, memref<4x3x3x5xf32>) outs(%y : memref<?x4x8x8xf32>)
  return
}

// -----

// Grouped bf16 (the expand_shape view grove-to-linalg makes of the padded
// input), a zero linalg.fill as the padding's fill and memref.copy as its
// copy: folded; the input is split into 2 groups of 4 channels by a view
// (group stride 4 x 49), stride 2.
// CHECK-LABEL: func.func @grouped_bf16(
// CHECK-SAME: %[[X:.*]]: memref<2x8x7x7xbf16>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: %[[VX:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [2, 2, 4, 7, 7], strides: [392, 196, 49, 7, 1]
// CHECK: %[[CW:.*]] = memref.cast
// CHECK: %[[CY:.*]] = memref.cast
// CHECK: %[[P:.*]] = arith.constant 1 : i64
// CHECK: %[[P2:.*]] = arith.constant 1 : i64
// CHECK: %[[S:.*]] = arith.constant 2 : i64
// CHECK: call @grove_rt_cuda_conv2d_bf16(%[[VX]], %[[CW]], %[[CY]], %[[P]], %[[P2]], %[[S]],
func.func @grouped_bf16(%x: memref<2x8x7x7xbf16>, %w: memref<2x3x4x3x3xbf16>, %y: memref<2x2x3x4x4xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %p = memref.alloc() : memref<2x8x9x9xbf16>
  linalg.fill ins(%zero : bf16) outs(%p : memref<2x8x9x9xbf16>)
  %in = memref.subview %p[0, 0, 1, 1] [2, 8, 7, 7] [1, 1, 1, 1] : memref<2x8x9x9xbf16> to memref<2x8x7x7xbf16, strided<[648, 81, 9, 1], offset: 10>>
  memref.copy %x, %in : memref<2x8x7x7xbf16> to memref<2x8x7x7xbf16, strided<[648, 81, 9, 1], offset: 10>>
  %xg = memref.expand_shape %p [[0], [1, 2], [3], [4]] output_shape [2, 2, 4, 9, 9] : memref<2x8x9x9xbf16> into memref<2x2x4x9x9xbf16>
  linalg.fill ins(%zero : bf16) outs(%y : memref<2x2x3x4x4xbf16>)
  linalg.conv_2d_ngchw_gfchw {strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%xg, %w : memref<2x2x4x9x9xbf16>, memref<2x3x4x3x3xbf16>) outs(%y : memref<2x2x3x4x4xbf16>)
  return
}

// -----

// No padding at all (the input is the function's buffer), f16.
// CHECK-LABEL: func.func @unpadded_f16(
// CHECK-SAME: %[[X:.*]]: memref<1x3x6x6xf16>
// CHECK: %[[VX:.*]] = memref.reinterpret_cast %[[X]]
// CHECK: %[[Z:.*]] = arith.constant 0 : i64
// CHECK: %[[Z2:.*]] = arith.constant 0 : i64
// CHECK: call @grove_rt_cuda_conv2d_f16(%[[VX]], %{{.*}}, %{{.*}}, %[[Z]], %[[Z2]],
func.func @unpadded_f16(%x: memref<1x3x6x6xf16>, %w: memref<4x3x3x3xf16>, %y: memref<1x4x4x4xf16>) {
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<1x4x4x4xf16>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x3x6x6xf16>, memref<4x3x3x3xf16>) outs(%y : memref<1x4x4x4xf16>)
  return
}

// -----

// Padding 1 on top, 0 at the bottom: cuDNN pads both sides alike, so the
// padded buffer stays and the call pads nothing.
// CHECK-LABEL: func.func @asymmetric(
// CHECK: %[[P:.*]] = memref.alloc() : memref<1x3x7x8xf32>
// CHECK: linalg.map
// CHECK: linalg.copy
// CHECK: %[[VX:.*]] = memref.reinterpret_cast %[[P]]
// CHECK: %[[Z:.*]] = arith.constant 0 : i64
// CHECK: %[[Z2:.*]] = arith.constant 0 : i64
// CHECK: call @grove_rt_cuda_conv2d_f32(%[[VX]], %{{.*}}, %{{.*}}, %[[Z]], %[[Z2]],
func.func @asymmetric(%x: memref<1x3x6x6xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x5x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<1x3x7x8xf32>
  linalg.map outs(%p : memref<1x3x7x8xf32>) (%init: f32) { linalg.yield %zero : f32 }
  %in = memref.subview %p[0, 0, 1, 1] [1, 3, 6, 6] [1, 1, 1, 1] : memref<1x3x7x8xf32> to memref<1x3x6x6xf32, strided<[168, 56, 8, 1], offset: 9>>
  linalg.copy ins(%x : memref<1x3x6x6xf32>) outs(%in : memref<1x3x6x6xf32, strided<[168, 56, 8, 1], offset: 9>>)
  linalg.fill ins(%zero : f32) outs(%y : memref<1x4x5x6xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %w : memref<1x3x7x8xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x5x6xf32>)
  return
}

// -----

// The padded buffer has another reader, and in the second function the
// input is written between its copy and the convolution: neither padding
// is folded (the call would miss the reader's buffer, or read the new
// values).
// CHECK-LABEL: func.func @padded_read_elsewhere(
// CHECK: %[[P:.*]] = memref.alloc() : memref<1x3x8x8xf32>
// CHECK: memref.copy %[[P]]
// CHECK: %[[VX:.*]] = memref.reinterpret_cast %[[P]]
// CHECK: call @grove_rt_cuda_conv2d_f32(%[[VX]]
func.func @padded_read_elsewhere(%x: memref<1x3x6x6xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x6x6xf32>, %other: memref<1x3x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<1x3x8x8xf32>
  linalg.map outs(%p : memref<1x3x8x8xf32>) (%init: f32) { linalg.yield %zero : f32 }
  %in = memref.subview %p[0, 0, 1, 1] [1, 3, 6, 6] [1, 1, 1, 1] : memref<1x3x8x8xf32> to memref<1x3x6x6xf32, strided<[192, 64, 8, 1], offset: 9>>
  linalg.copy ins(%x : memref<1x3x6x6xf32>) outs(%in : memref<1x3x6x6xf32, strided<[192, 64, 8, 1], offset: 9>>)
  memref.copy %p, %other : memref<1x3x8x8xf32> to memref<1x3x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<1x4x6x6xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %w : memref<1x3x8x8xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x6x6xf32>)
  return
}

// CHECK-LABEL: func.func @input_overwritten(
// CHECK: %[[P:.*]] = memref.alloc() : memref<1x3x8x8xf32>
// CHECK: linalg.copy
// CHECK: linalg.fill {{.*}} outs(%arg0
// CHECK: %[[VX:.*]] = memref.reinterpret_cast %[[P]]
// CHECK: call @grove_rt_cuda_conv2d_f32(%[[VX]]
func.func @input_overwritten(%x: memref<1x3x6x6xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %p = memref.alloc() : memref<1x3x8x8xf32>
  linalg.map outs(%p : memref<1x3x8x8xf32>) (%init: f32) { linalg.yield %zero : f32 }
  %in = memref.subview %p[0, 0, 1, 1] [1, 3, 6, 6] [1, 1, 1, 1] : memref<1x3x8x8xf32> to memref<1x3x6x6xf32, strided<[192, 64, 8, 1], offset: 9>>
  linalg.copy ins(%x : memref<1x3x6x6xf32>) outs(%in : memref<1x3x6x6xf32, strided<[192, 64, 8, 1], offset: 9>>)
  linalg.fill ins(%one : f32) outs(%x : memref<1x3x6x6xf32>)
  linalg.fill ins(%zero : f32) outs(%y : memref<1x4x6x6xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %w : memref<1x3x8x8xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x6x6xf32>)
  return
}

// -----

// Accumulating into the output (no zero fill right before), mixed element
// types, and an integer convolution: left to the kernels.
// CHECK-LABEL: func.func @not_for_the_service(
// CHECK-NOT: call
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK-NOT: call
func.func @not_for_the_service(%x: memref<1x3x6x6xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x4x4xf32>,
                               %xh: memref<1x3x6x6xf16>, %wh: memref<4x3x3x3xf16>, %yf: memref<1x4x4x4xf32>,
                               %xi: memref<1x3x6x6xi32>, %wi: memref<4x3x3x3xi32>, %yi: memref<1x4x4x4xi32>) {
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x3x6x6xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x4x4xf32>)
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%yf : memref<1x4x4x4xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%xh, %wh : memref<1x3x6x6xf16>, memref<4x3x3x3xf16>) outs(%yf : memref<1x4x4x4xf32>)
  %zi = arith.constant 0 : i32
  linalg.fill ins(%zi : i32) outs(%yi : memref<1x4x4x4xi32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%xi, %wi : memref<1x3x6x6xi32>, memref<4x3x3x3xi32>) outs(%yi : memref<1x4x4x4xi32>)
  return
}

// -----

// Padding in the channels too (3 -> 4, a zero channel): not a spatial pad
// the call can express, so the padded buffer stays. A batch allocated from
// another buffer's size: likewise.
// CHECK-LABEL: func.func @channel_padded(
// CHECK: %[[P:.*]] = memref.alloc() : memref<1x4x8x8xf32>
// CHECK: %[[VX:.*]] = memref.reinterpret_cast %[[P]]
// CHECK: call @grove_rt_cuda_conv2d_f32(%[[VX]]
func.func @channel_padded(%x: memref<1x3x6x6xf32>, %w: memref<4x4x3x3xf32>, %y: memref<1x4x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<1x4x8x8xf32>
  linalg.map outs(%p : memref<1x4x8x8xf32>) (%init: f32) { linalg.yield %zero : f32 }
  %in = memref.subview %p[0, 0, 1, 1] [1, 3, 6, 6] [1, 1, 1, 1] : memref<1x4x8x8xf32> to memref<1x3x6x6xf32, strided<[256, 64, 8, 1], offset: 9>>
  linalg.copy ins(%x : memref<1x3x6x6xf32>) outs(%in : memref<1x3x6x6xf32, strided<[256, 64, 8, 1], offset: 9>>)
  linalg.fill ins(%zero : f32) outs(%y : memref<1x4x6x6xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %w : memref<1x4x8x8xf32>, memref<4x4x3x3xf32>) outs(%y : memref<1x4x6x6xf32>)
  return
}

// CHECK-LABEL: func.func @batch_from_elsewhere(
// CHECK: %[[P:.*]] = memref.alloc(%{{.*}}) : memref<?x3x8x8xf32>
// CHECK: %[[VX:.*]] = memref.reinterpret_cast %[[P]]
// CHECK: call @grove_rt_cuda_conv2d_f32(%[[VX]]
func.func @batch_from_elsewhere(%x: memref<?x3x6x6xf32>, %w: memref<4x3x3x3xf32>, %y: memref<?x4x6x6xf32>, %n: index) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %p = memref.alloc(%n) : memref<?x3x8x8xf32>
  linalg.map outs(%p : memref<?x3x8x8xf32>) (%init: f32) { linalg.yield %zero : f32 }
  %m = memref.dim %x, %c0 : memref<?x3x6x6xf32>
  %in = memref.subview %p[0, 0, 1, 1] [%m, 3, 6, 6] [1, 1, 1, 1] : memref<?x3x8x8xf32> to memref<?x3x6x6xf32, strided<[192, 64, 8, 1], offset: 9>>
  linalg.copy ins(%x : memref<?x3x6x6xf32>) outs(%in : memref<?x3x6x6xf32, strided<[192, 64, 8, 1], offset: 9>>)
  linalg.fill ins(%zero : f32) outs(%y : memref<?x4x6x6xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %w : memref<?x3x8x8xf32>, memref<4x3x3x3xf32>) outs(%y : memref<?x4x6x6xf32>)
  return
}

// -----

// No taps (a 0-channel weight): the result is the zero fill, left to the
// loops (cuDNN rejects empty sums).
// CHECK-LABEL: func.func @empty_sum(
// CHECK: linalg.fill
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK-NOT: call
func.func @empty_sum(%x: memref<1x0x6x6xf32>, %w: memref<4x0x3x3xf32>, %y: memref<1x4x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<1x4x4x4xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x0x6x6xf32>, memref<4x0x3x3xf32>) outs(%y : memref<1x4x4x4xf32>)
  return
}

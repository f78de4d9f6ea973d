// RUN: grove-opt %s -split-input-file --convert-linalg-to-blas | FileCheck %s
// RUN: grove-opt %s -split-input-file --convert-linalg-to-blas=target=cuda | FileCheck %s --check-prefix=CUDA

// convert-linalg-to-blas{target=host} (LinalgToBlasConv.cpp): a weight
// gradient in convert-grove-to-linalg's library form (a linalg.generic:
// loops g, f, c, i, j parallel and n, y, x reductions, x read at
// (n, g, c, y*sh + i*dh, x*sw + j*dw), dy at (n, g, f, y, x), dw += x * dy)
// into a zero-filled buffer becomes grove_rt_conv2d_weight_grad_f32 (abi.h;
// oneDNN's backward-weights convolution), then the padding (top, left,
// bottom, right), the strides and the dilations the map gives, as i64. A
// zero padding the compiler materialised is folded into the call, as for the
// forward convolution. CUDA keeps the loops.

#x = affine_map<(g, f, c, i, j, n, y, x) -> (n, g, c, y * 2 + i, x * 2 + j)>
#dy = affine_map<(g, f, c, i, j, n, y, x) -> (n, g, f, y, x)>
#dw = affine_map<(g, f, c, i, j, n, y, x) -> (g, f, c, i, j)>
// CHECK-LABEL: func.func @strided(
// CHECK-SAME: %[[X:.*]]: memref<?x2x4x9x9xf32>, %[[DY:.*]]: memref<?x2x3x4x4xf32>, %[[DW:.*]]: memref<2x3x4x3x3xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[CX:.*]] = memref.cast %[[X]]
// CHECK: %[[CDY:.*]] = memref.cast %[[DY]]
// CHECK: %[[CDW:.*]] = memref.cast %[[DW]]
// CHECK-COUNT-4: arith.constant 0 : i64
// CHECK: %[[SH:.*]] = arith.constant 2 : i64
// CHECK: %[[SW:.*]] = arith.constant 2 : i64
// CHECK: %[[DH:.*]] = arith.constant 1 : i64
// CHECK: %[[DWD:.*]] = arith.constant 1 : i64
// CHECK: call @grove_rt_conv2d_weight_grad_f32(%[[CX]], %[[CDY]], %[[CDW]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SH]], %[[SW]], %[[DH]], %[[DWD]])
// CHECK-NOT: linalg.generic
// CUDA-LABEL: func.func @strided(
// CUDA-NOT: call
// CUDA: linalg.generic
func.func @strided(%x: memref<?x2x4x9x9xf32>, %dy: memref<?x2x3x4x4xf32>, %dw: memref<2x3x4x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dw : memref<2x3x4x3x3xf32>)
  linalg.generic {indexing_maps = [#x, #dy, #dw], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : memref<?x2x4x9x9xf32>, memref<?x2x3x4x4xf32>) outs(%dw : memref<2x3x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A materialised zero padding (fresh buffer, zero fill, the input copied
// into its interior, viewed in the grouped form) folds into the call: the
// unpadded input split into groups, pads 1, 1, 0, 0; dilation 2.
#x = affine_map<(g, f, c, i, j, n, y, x) -> (n, g, c, y + i * 2, x + j * 2)>
#dy = affine_map<(g, f, c, i, j, n, y, x) -> (n, g, f, y, x)>
#dw = affine_map<(g, f, c, i, j, n, y, x) -> (g, f, c, i, j)>
// CHECK-LABEL: func.func @padded(
// CHECK-SAME: %[[X:.*]]: memref<2x8x6x6xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: memref.reinterpret_cast %[[X]] to offset: [0], sizes: [2, 2, 4, 6, 6], strides: [288, 144, 36, 6, 1]
// CHECK: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: %[[ONE2:.*]] = arith.constant 1 : i64
// CHECK: %[[Z1:.*]] = arith.constant 0 : i64
// CHECK: %[[Z2:.*]] = arith.constant 0 : i64
// CHECK: %[[S1:.*]] = arith.constant 1 : i64
// CHECK: %[[S2:.*]] = arith.constant 1 : i64
// CHECK: %[[D1:.*]] = arith.constant 2 : i64
// CHECK: %[[D2:.*]] = arith.constant 2 : i64
// CHECK: call @grove_rt_conv2d_weight_grad_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %[[ONE2]], %[[Z1]], %[[Z2]], %[[S1]], %[[S2]], %[[D1]], %[[D2]])
func.func @padded(%x: memref<2x8x6x6xf32>, %dy: memref<2x2x3x3x3xf32>, %dw: memref<2x3x4x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<2x8x7x7xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<2x8x7x7xf32>)
  %in = memref.subview %p[0, 0, 1, 1] [2, 8, 6, 6] [1, 1, 1, 1] : memref<2x8x7x7xf32> to memref<2x8x6x6xf32, strided<[392, 49, 7, 1], offset: 8>>
  memref.copy %x, %in : memref<2x8x6x6xf32> to memref<2x8x6x6xf32, strided<[392, 49, 7, 1], offset: 8>>
  %p5 = memref.expand_shape %p [[0], [1, 2], [3], [4]] output_shape [2, 2, 4, 7, 7] : memref<2x8x7x7xf32> into memref<2x2x4x7x7xf32>
  linalg.fill ins(%zero : f32) outs(%dw : memref<2x3x4x3x3xf32>)
  linalg.generic {indexing_maps = [#x, #dy, #dw], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%p5, %dy : memref<2x2x4x7x7xf32>, memref<2x2x3x3x3xf32>) outs(%dw : memref<2x3x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %b, %a : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  }
  memref.dealloc %p : memref<2x8x7x7xf32>
  return
}

// -----

// Left as loops: an output that is not zero-filled (the service writes over
// it), a body that is not a multiply-add, maps of another contraction (dy's
// filters and channels swapped).
#x = affine_map<(g, f, c, i, j, n, y, x) -> (n, g, c, y + i, x + j)>
#dy = affine_map<(g, f, c, i, j, n, y, x) -> (n, g, f, y, x)>
#dyswap = affine_map<(g, f, c, i, j, n, y, x) -> (n, g, c, y, x)>
#dw = affine_map<(g, f, c, i, j, n, y, x) -> (g, f, c, i, j)>
// CHECK-LABEL: func.func @not_matched(
// CHECK-NOT: call
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: call
func.func @not_matched(%x: memref<1x1x2x6x6xf32>, %dy: memref<1x1x2x4x4xf32>, %dw: memref<1x2x2x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#x, #dy, #dw], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : memref<1x1x2x6x6xf32>, memref<1x1x2x4x4xf32>) outs(%dw : memref<1x2x2x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%dw : memref<1x2x2x3x3xf32>)
  linalg.generic {indexing_maps = [#x, #dy, #dw], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : memref<1x1x2x6x6xf32>, memref<1x1x2x4x4xf32>) outs(%dw : memref<1x2x2x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.subf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%dw : memref<1x2x2x3x3xf32>)
  linalg.generic {indexing_maps = [#x, #dyswap, #dw], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : memref<1x1x2x6x6xf32>, memref<1x1x2x4x4xf32>) outs(%dw : memref<1x2x2x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Also left as loops: f64 (the service is f32), a transposed gradient map
// (dw written at (f, g, c, i, j)), an output filled with one instead of zero.
#x = affine_map<(g, f, c, i, j, n, y, x) -> (n, g, c, y + i, x + j)>
#dy = affine_map<(g, f, c, i, j, n, y, x) -> (n, g, f, y, x)>
#dw = affine_map<(g, f, c, i, j, n, y, x) -> (g, f, c, i, j)>
#dwt = affine_map<(g, f, c, i, j, n, y, x) -> (f, g, c, i, j)>
// CHECK-LABEL: func.func @other_forms(
// CHECK-NOT: call
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: call
func.func @other_forms(%x: memref<1x1x2x6x6xf64>, %dy: memref<1x1x2x4x4xf64>, %dw: memref<1x2x2x3x3xf64>,
                       %xf: memref<1x1x2x6x6xf32>, %dyf: memref<1x1x2x4x4xf32>, %dwt: memref<2x1x2x3x3xf32>, %dwf: memref<1x2x2x3x3xf32>) {
  %zero = arith.constant 0.0 : f64
  %zerof = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%zero : f64) outs(%dw : memref<1x2x2x3x3xf64>)
  linalg.generic {indexing_maps = [#x, #dy, #dw], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : memref<1x1x2x6x6xf64>, memref<1x1x2x4x4xf64>) outs(%dw : memref<1x2x2x3x3xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %p = arith.mulf %a, %b : f64
    %s = arith.addf %acc, %p : f64
    linalg.yield %s : f64
  }
  linalg.fill ins(%zerof : f32) outs(%dwt : memref<2x1x2x3x3xf32>)
  linalg.generic {indexing_maps = [#x, #dy, #dwt], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%xf, %dyf : memref<1x1x2x6x6xf32>, memref<1x1x2x4x4xf32>) outs(%dwt : memref<2x1x2x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%one : f32) outs(%dwf : memref<1x2x2x3x3xf32>)
  linalg.generic {indexing_maps = [#x, #dy, #dw], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%xf, %dyf : memref<1x1x2x6x6xf32>, memref<1x1x2x4x4xf32>) outs(%dwf : memref<1x2x2x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

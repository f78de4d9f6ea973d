// RUN: grove-opt %s -split-input-file --grove-collapse-loop-dims | FileCheck %s

// grove-collapse-loop-dims (CollapseLoopDims.cpp): adjacent loops of one
// iterator type whose dimensions are adjacent, in order, in every operand
// (or absent from it) become one loop; operands and results are viewed
// through collapse_shape / expand_shape.

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// Elementwise over a contiguous NCHW tensor: one loop over all of it.
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[X:.*]]: tensor<?x512x7x7xf32>)
// CHECK: %[[XC:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2, 3]] : tensor<?x512x7x7xf32> into tensor<?xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel"]} ins(%[[XC]] : tensor<?xf32>)
// CHECK: tensor.expand_shape %[[R]] {{\[}}[0, 1, 2, 3]] output_shape [%{{.*}}, 512, 7, 7] : tensor<?xf32> into tensor<?x512x7x7xf32>
func.func @elementwise(%x: tensor<?x512x7x7xf32>) -> tensor<?x512x7x7xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x512x7x7xf32>
  %e = tensor.empty(%n) : tensor<?x512x7x7xf32>
  %zero = arith.constant 0.0 : f32
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<?x512x7x7xf32>) outs(%e : tensor<?x512x7x7xf32>) {
  ^bb0(%a: f32, %o: f32):
    %1 = arith.maximumf %a, %zero : f32
    linalg.yield %1 : f32
  } -> tensor<?x512x7x7xf32>
  return %0 : tensor<?x512x7x7xf32>
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1)>

// A per-channel operand splits the run: N, C and H·W stay three loops (the
// image is one).
// CHECK-DAG: #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[C3:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @channel_bias
// CHECK: linalg.generic {indexing_maps = [#[[ID3]], #[[C3]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<?x512x49xf32>, tensor<512xf32>)
func.func @channel_bias(%x: tensor<?x512x7x7xf32>, %b: tensor<512xf32>) -> tensor<?x512x7x7xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x512x7x7xf32>
  %e = tensor.empty(%n) : tensor<?x512x7x7xf32>
  %0 = linalg.generic {indexing_maps = [#id, #chan, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %b : tensor<?x512x7x7xf32>, tensor<512xf32>) outs(%e : tensor<?x512x7x7xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %1 = arith.addf %a, %c : f32
    linalg.yield %1 : f32
  } -> tensor<?x512x7x7xf32>
  return %0 : tensor<?x512x7x7xf32>
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#nc = affine_map<(d0, d1, d2, d3) -> (d0, d1)>

// A global average pool's sums: N·C parallel, H·W reduced; runs of
// different iterator types are not merged.
// CHECK-LABEL: func.func @image_sums
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<?x49xf32>) outs(%{{.*}} : tensor<?xf32>)
func.func @image_sums(%x: tensor<?x512x7x7xf32>, %init: tensor<?x512xf32>) -> tensor<?x512xf32> {
  %0 = linalg.generic {indexing_maps = [#id, #nc], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<?x512x7x7xf32>) outs(%init : tensor<?x512xf32>) {
  ^bb0(%a: f32, %o: f32):
    %1 = arith.addf %a, %o : f32
    linalg.yield %1 : f32
  } -> tensor<?x512xf32>
  return %0 : tensor<?x512xf32>
}

// -----

#in = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// A transpose of the middle dimensions: no two loops are adjacent in both
// operands, so nothing changes.
// CHECK-LABEL: func.func @transpose
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
func.func @transpose(%x: tensor<2x3x4x5xf32>, %init: tensor<2x4x3x5xf32>) -> tensor<2x4x3x5xf32> {
  %0 = linalg.generic {indexing_maps = [#in, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<2x3x4x5xf32>) outs(%init : tensor<2x4x3x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x4x3x5xf32>
  return %0 : tensor<2x4x3x5xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// An operand that is a slice is left alone: as a buffer it may not be
// collapsible, and bufferization would copy it.
// CHECK-LABEL: func.func @slice_operand
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]}
func.func @slice_operand(%x: tensor<8x16xf32>, %init: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %s = tensor.extract_slice %x[0, 0] [8, 8] [1, 1] : tensor<8x16xf32> to tensor<8x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<8x8xf32>) outs(%init : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %1 = arith.mulf %a, %a : f32
    linalg.yield %1 : f32
  } -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

#win = affine_map<(d0, d1, d2) -> (d0, d1 + d2)>
#filt = affine_map<(d0, d1, d2) -> (d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>

// A window (d1 + d2, a 1-D convolution) is not a plain walk over memory:
// left alone.
// CHECK-LABEL: func.func @window
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]}
func.func @window(%x: tensor<4x10xf32>, %w: tensor<3xf32>, %init: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = linalg.generic {indexing_maps = [#win, #filt, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x10xf32>, tensor<3xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %1 = arith.mulf %a, %b : f32
    %2 = arith.addf %1, %o : f32
    linalg.yield %2 : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A static zero loop next to a dynamic one: nothing to run, and collapsing
// them would type the merged size as a static 0 (memref.collapse_shape
// rejects that after bufferization). Left alone.
// CHECK-LABEL: func.func @zero_loop
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @zero_loop(%x: tensor<?x0xf32>) -> tensor<?x0xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x0xf32>
  %e = tensor.empty(%n) : tensor<?x0xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x0xf32>) outs(%e : tensor<?x0xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n2 = arith.negf %a : f32
    linalg.yield %n2 : f32
  } -> tensor<?x0xf32>
  return %r : tensor<?x0xf32>
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#c11 = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>

// A per-channel operand as NumPy broadcasting spells it, C x 1 x 1 read
// at constant 0: its unit dimensions are dropped (collapse_shape to C, the
// map to (d1)), after which H·W merge as for a plain per-channel operand.
// CHECK-DAG: #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[C3:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @unit_broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<?x16x8x8xf32>, %[[S:.*]]: tensor<16x1x1xf32>)
// CHECK: %[[SC:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0, 1, 2]] : tensor<16x1x1xf32> into tensor<16xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID3]], #[[C3]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}}, %[[SC]] : tensor<?x16x64xf32>, tensor<16xf32>)
func.func @unit_broadcast(%x: tensor<?x16x8x8xf32>, %s: tensor<16x1x1xf32>) -> tensor<?x16x8x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16x8x8xf32>
  %e = tensor.empty(%n) : tensor<?x16x8x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #c11, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %s : tensor<?x16x8x8xf32>, tensor<16x1x1xf32>) outs(%e : tensor<?x16x8x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %1 = arith.mulf %a, %c : f32
    linalg.yield %1 : f32
  } -> tensor<?x16x8x8xf32>
  return %0 : tensor<?x16x8x8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#zero = affine_map<(d0, d1) -> (0, 0)>
#mixed = affine_map<(d0, d1) -> (0, d1)>

// All unit dimensions dropped: a 1 x 1 operand becomes a rank-0 tensor
// read by every iteration. A constant 0 on a dimension that is not of size
// 1 (here the 4 x 8 operand's first) is an indexed row, not a broadcast:
// left alone, and that operand keeps the loops from merging.
// CHECK-LABEL: func.func @scalar_and_row
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[S:.*]]: tensor<1x1xf32>, %[[R:.*]]: tensor<4x8xf32>)
// CHECK: %[[SC:.*]] = tensor.collapse_shape %[[S]] [] : tensor<1x1xf32> into tensor<f32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[SC]], %[[R]] : tensor<4x8xf32>, tensor<f32>, tensor<4x8xf32>)
func.func @scalar_and_row(%x: tensor<4x8xf32>, %s: tensor<1x1xf32>, %r: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id2, #zero, #mixed, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %s, %r : tensor<4x8xf32>, tensor<1x1xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %1 = arith.mulf %a, %b : f32
    %2 = arith.addf %1, %c : f32
    linalg.yield %2 : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// RUN: grove-opt %s -split-input-file --grove-parallel-loops-first | FileCheck %s

// Batch statistics of N x C x H x W: per channel, a sum over N, H and W.
// The channel loop moves outermost (for the thread team), then N, then H
// and W merged into one contiguous loop (for the vectorizer).
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @channel_sums
// CHECK: %[[X:.*]] = memref.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : memref<?x16x8x8xf32> into memref<?x16x64xf32>
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[X]] : memref<?x16x64xf32>) outs(%arg1 : memref<16xf32>)
// CHECK: arith.addf
// CHECK-NOT: linalg.reduce
func.func @channel_sums(%x: memref<?x16x8x8xf32>, %s: memref<16xf32>) {
  linalg.reduce ins(%x : memref<?x16x8x8xf32>) outs(%s : memref<16xf32>) dimensions = [0, 2, 3]
    (%a: f32, %b: f32) {
      %y = arith.addf %a, %b : f32
      linalg.yield %y : f32
    }
  return
}

// -----

#nc = affine_map<(d0, d1) -> (d0, d1)>
#c = affine_map<(d0, d1) -> (d1)>
#cn = affine_map<(d0, d1) -> (d1, d0)>
#n = affine_map<(d0, d1) -> (d0)>

// Left as they are: a sum over the rows of N x C (C innermost and
// contiguous: interchanged, the walk would be strided) and a row sum whose
// parallel loop leads already.
// CHECK-LABEL: func.func @left_alone
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["reduction", "parallel"]}
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]}
// CHECK-NOT: memref.collapse_shape
func.func @left_alone(%x: memref<?x10xf32>, %s: memref<10xf32>, %r: memref<?xf32>) {
  linalg.generic {indexing_maps = [#nc, #c], iterator_types = ["reduction", "parallel"]} ins(%x : memref<?x10xf32>) outs(%s : memref<10xf32>) {
  ^bb0(%a: f32, %b: f32):
    %y = arith.addf %a, %b : f32
    linalg.yield %y : f32
  }
  linalg.generic {indexing_maps = [#nc, #n], iterator_types = ["parallel", "reduction"]} ins(%x : memref<?x10xf32>) outs(%r : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %y = arith.addf %a, %b : f32
    linalg.yield %y : f32
  }
  return
}

// -----

#in = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#out = affine_map<(d0, d1, d2, d3) -> (d1)>

// Interchanged but not collapsed: H and W of a strided view are not one
// contiguous run.
// CHECK-LABEL: func.func @strided
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%arg0 : memref<4x16x8x8xf32, strided<[2048, 128, 16, 1]>>)
func.func @strided(%x: memref<4x16x8x8xf32, strided<[2048, 128, 16, 1]>>, %s: memref<16xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%x : memref<4x16x8x8xf32, strided<[2048, 128, 16, 1]>>) outs(%s : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32):
    %y = arith.addf %a, %b : f32
    linalg.yield %y : f32
  }
  return
}

// -----

#in = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#out = affine_map<(d0, d1, d2, d3) -> (d1)>

// A sum over N of pooled N x C x 1 x 1: the unit loops walk nothing, so the
// innermost loop that does is C (parallel): left alone.
// CHECK-LABEL: func.func @unit_loops
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
func.func @unit_loops(%x: memref<?x64x1x1xf32>, %s: memref<64xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%x : memref<?x64x1x1xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %y = arith.addf %a, %b : f32
    linalg.yield %y : f32
  }
  return
}

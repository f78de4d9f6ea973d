// RUN: grove-opt %s --grove-common | FileCheck %s

// A LAMB step through the shared phases. Its update direction is both
// normed and applied: the norms' reduction recomputes it from the state
// (grove-fuse-elementwise), the update recomputes it again while writing
// the parameter and both moments in place (grove-write-state-in-place).
// Each norm is 16 partial sums for the threads (grove-split-full-
// reductions), and the two norms are one loop (grove-fuse-sibling-
// reductions). Two passes over the parameter's data; nothing of its size
// allocated or copied.
// CHECK-LABEL: func.func @_grove_model_step(
// CHECK-SAME: %[[P:[^:]*]]: memref<256x256xf32> {grove.state = @w, grove.writes}, %[[G:[^:]*]]: memref<256x256xf32>
// CHECK-SAME: %[[M:[^:]*]]: memref<256x256xf32> {grove.state = @w.lamb.m, grove.writes}, %[[V:[^:]*]]: memref<256x256xf32> {grove.state = @w.lamb.v, grove.writes}
// CHECK: %[[CP:.*]] = memref.collapse_shape %[[P]]
// CHECK-DAG: %[[CM:.*]] = memref.collapse_shape %[[M]]
// CHECK-DAG: %[[CV:.*]] = memref.collapse_shape %[[V]]
// Both norms, the parameter's and the update direction's (from the old
// state and the gradient), in one pass.
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins({{.*}} : memref<16x4096xf32>, memref<16x4096xf32>, memref<16x4096xf32>, memref<f32>, memref<16x4096xf32>, memref<f32>) outs(%{{.*}}, %{{.*}} : memref<16xf32>, memref<16xf32>)
// CHECK-NOT: linalg.generic {{.*}} memref<16x4096xf32>
// CHECK: math.sqrt
// The update, in place.
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]} {{.*}} outs(%[[CV]], %[[CM]], %[[CP]] : memref<65536xf32>, memref<65536xf32>, memref<65536xf32>)
// CHECK-NOT: linalg.generic {{.*}} memref<65536xf32>
// CHECK-NOT: memref.copy {{.*}} memref<256x256xf32>
// CHECK: return
// CHECK-NOT: memref.alloc() {{.*}} : memref<256x256xf32>
// CHECK-NOT: memref.alloc() {{.*}} : memref<{{16x4096|65536}}xf32>
module {
  grove.param @w : tensor<256x256xf32>
  grove.param @dw : tensor<256x256xf32>
  func.func @step() {
    %g = grove.get_param @dw : tensor<256x256xf32>
    grove.lamb [@w] (%g) {lr = 1.0e-03 : f64, weight_decay = 0.01 : f64} : tensor<256x256xf32>
    return
  }
}

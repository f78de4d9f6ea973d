// RUN: grove-opt %s --grove-common | FileCheck %s

// An Adam step through the shared phases: the new moments fuse into the
// parameter's update (grove-fuse-elementwise), which writes the parameter
// and both moments in their own buffers (grove-write-state-in-place): one
// loop over the parameter's data, no buffer allocated for it and no copy.
// CHECK-LABEL: func.func @_grove_model_step(
// CHECK-SAME: %[[P:[^:]*]]: memref<256x64xf32> {grove.state = @w, grove.writes}, %[[G:[^:]*]]: memref<256x64xf32>
// CHECK-SAME: %[[M:[^:]*]]: memref<256x64xf32> {grove.state = @w.adam.m, grove.writes}, %[[V:[^:]*]]: memref<256x64xf32> {grove.state = @w.adam.v, grove.writes}
// CHECK-NOT: memref.alloc() {{.*}} : memref<256x64xf32>
// CHECK-NOT: memref.alloc() {{.*}} : memref<16384xf32>
// CHECK: %[[CP:.*]] = memref.collapse_shape %[[P]]
// CHECK: %[[CM:.*]] = memref.collapse_shape %[[M]]
// CHECK: %[[CV:.*]] = memref.collapse_shape %[[V]]
// CHECK: linalg.generic {{.*}} outs(%[[CV]], %[[CM]], %[[CP]] : memref<16384xf32>, memref<16384xf32>, memref<16384xf32>)
// CHECK-NOT: linalg.generic {{.*}} memref<16384xf32>
// CHECK-NOT: memref.copy {{.*}} memref<256x64xf32>
// CHECK: return
module {
  grove.param @w : tensor<256x64xf32>
  grove.param @dw : tensor<256x64xf32>
  func.func @step() {
    %g = grove.get_param @dw : tensor<256x64xf32>
    grove.adam [@w] (%g) {lr = 1.0e-03 : f64} : tensor<256x64xf32>
    return
  }
}

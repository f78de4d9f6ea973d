// RUN: grove-opt %s --grove-common | FileCheck %s

// The host's segment sums (convert-grove-to-linalg's segment-sum-rows, then
// scf-forall-to-parallel after bufferization): a parallel loop over the
// segments whose row is zeroed and gets each input row added in place, the
// columns innermost (what the host's loop hints then vectorize).

// CHECK-LABEL: func.func @_grove_m_f
// CHECK-NOT: scf.forall
// CHECK: %[[OUT:.*]] = memref.alloc
// CHECK: scf.parallel (%[[P:.*]]) =
// CHECK: %[[ROW:.*]] = memref.subview %[[OUT]][%[[P]], 0] [1, 64] [1, 1]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[ROW]]
// CHECK: scf.for %[[E:.*]] =
// CHECK: %[[IN:.*]] = memref.subview %arg0[%[[E]], 0] [1, 64] [1, 1]
// CHECK: linalg.add ins(%[[ROW]], %[[IN]] : {{.*}}) outs(%[[ROW]] : {{.*}})
// CHECK-NOT: memref.copy
// CHECK: return %[[OUT]]
module @m {
  func.func @f(%x: tensor<?x64xf32>, %o: tensor<?xi32>) -> tensor<?x64xf32> {
    %0 = grove.segment_sum %x, %o : (tensor<?x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
    return %0 : tensor<?x64xf32>
  }
}

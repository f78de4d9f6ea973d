// REQUIRES: cuda-target
// RUN: grove-opt %s --grove-to-cuda=gpu-format=isa | sed -e 's/\\0A/\n/g' -e 's/\\09/ /g' | FileCheck %s

// A long row sum through grove-to-cuda: a warp per row, whose
// gpu.subgroup_reduce (linalg-to-gpu-launch) reaches the PTX as five
// butterfly shuffles, each followed by its add, then lane 0's store.
// CHECK: .visible .entry _grove_warp_row_sum_k0_warp_reduce(
// CHECK: add.rn.f32 %r[[ACC:[0-9]+]], %r[[ACC]],
// CHECK: shfl.sync.bfly.b32 %r[[R1:[0-9]+]], %r[[ACC]], 1, 31, -1;
// CHECK-NEXT: add.rn.f32 %r{{[0-9]+}}, %r[[ACC]], %r[[R1]];
// CHECK: shfl.sync.bfly.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, 2, 31, -1;
// CHECK: shfl.sync.bfly.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, 4, 31, -1;
// CHECK: shfl.sync.bfly.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, 8, 31, -1;
// CHECK: shfl.sync.bfly.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, 16, 31, -1;
// CHECK-NOT: shfl
// CHECK: st.global.b32
module @warp {
  func.func @row_sum(%x: tensor<?x4096xf32> {grove.name = "x"})
      -> (tensor<?xf32> {grove.name = "y"}) {
    %y = grove.reduce_sum %x {axes = array<i64: 1>}
        : tensor<?x4096xf32> -> tensor<?xf32>
    return %y : tensor<?xf32>
  }
}

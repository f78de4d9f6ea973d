// RUN: grove-opt %s -split-input-file --convert-linalg-to-gpu-launch --canonicalize | FileCheck %s

// convert-linalg-to-gpu-launch's warp-per-point kernels (LinalgToGPULaunch.cpp,
// emitWarpReductionKernel): a reduction along the inputs' innermost index,
// longer than 128 points or dynamic, whose outputs each fold their terms in
// with one add / max / min. Blocks of 256 threads hold 8 warps, one output
// point each; the lanes stride the reduction from the combiner's identity,
// one gpu.subgroup_reduce combines them (grove-lower-subgroup-reduce makes
// it shuffles, lower-subgroup-reduce.mlir), and lane 0 folds in the start
// value and stores. Other reductions keep a thread per point
// (linalg-to-gpu-launch.mlir). Each launch names its kernel
// <function>_k<N>_<kind> (the `function` attribute outlining takes).

// A dynamic row sum: lane l sums columns l, l + 32, ...; the butterfly
// (offsets 16 to 1); lane 0 adds y's stored value and stores.
// CHECK-LABEL: func.func @row_sum
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?xf32>)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[WARPS:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[LANES:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[M:.*]] = memref.dim %[[X]], %c0
// CHECK-DAG: %[[N:.*]] = memref.dim %[[X]], %c1
// CHECK: %[[GRID:.*]] = arith.ceildivui %[[M]], %[[WARPS]] : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID]], {{.*}} threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[THREADS]], {{.*}} function(@row_sum_k0_warp_reduce) {
// CHECK-NEXT: %[[LANE:.*]] = arith.remui %[[TX]], %[[LANES]] : index
// CHECK-NEXT: %[[WARP:.*]] = arith.divui %[[TX]], %[[LANES]] : index
// CHECK-NEXT: %[[FIRST:.*]] = arith.muli %[[BX]], %[[WARPS]] : index
// CHECK-NEXT: %[[ROW:.*]] = arith.addi %[[FIRST]], %[[WARP]] : index
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[ROW]], %[[M]] : index
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK-NEXT: %[[PART:.*]] = scf.for %[[K:.*]] = %[[LANE]] to %[[N]] step %[[LANES]] iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CHECK-NEXT: %[[V:.*]] = memref.load %[[X]][%[[ROW]], %[[K]]] : memref<?x?xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[V]], %[[ACC]] : f32
// CHECK-NEXT: scf.yield %[[S]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[TOTAL:.*]] = gpu.subgroup_reduce add %[[PART]] uniform : (f32) -> f32
// CHECK-NEXT: %[[LANE0:.*]] = arith.cmpi eq, %[[LANE]], %c0 : index
// CHECK-NEXT: scf.if %[[LANE0]] {
// CHECK-NEXT: %[[OLD:.*]] = memref.load %[[Y]][%[[ROW]]] : memref<?xf32>
// CHECK-NEXT: %[[NEW:.*]] = arith.addf %[[TOTAL]], %[[OLD]] : f32
// CHECK-NEXT: memref.store %[[NEW]], %[[Y]][%[[ROW]]] : memref<?xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: gpu.terminator
// CHECK-NOT: gpu.launch
func.func @row_sum(%x: memref<?x?xf32>, %y: memref<?xf32>) {
  linalg.reduce ins(%x : memref<?x?xf32>) outs(%y : memref<?xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// softmax's sum of exp(x - max): two inputs (the max broadcast along the
// row), fast-math flags kept on the lanes' sums and the final combine (the
// butterfly's adds have nothing to reassociate), and the folded fill's value
// (not a load) as the start; the fill's own kernel is gone.
// CHECK-LABEL: func.func @exp_sum_fill_folded
// CHECK-SAME: (%[[X:.*]]: memref<?x4096xf32>, %[[MAX:.*]]: memref<?xf32>, %[[OUT:.*]]: memref<?xf32>)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[C4096:.*]] = arith.constant 4096 : index
// CHECK: %[[Y:.*]] = memref.alloc
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK: %[[PART:.*]] = scf.for %[[K:.*]] = %{{.*}} to %[[C4096]] step %c32 iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CHECK-NEXT: %[[V:.*]] = memref.load %[[X]][%[[ROW:.*]], %[[K]]] : memref<?x4096xf32>
// CHECK-NEXT: %[[MR:.*]] = memref.load %[[MAX]][%[[ROW]]] : memref<?xf32>
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[V]], %[[MR]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[E]], %[[ACC]] fastmath<reassoc> : f32
// CHECK: gpu.subgroup_reduce add %[[PART]] uniform : (f32) -> f32
// CHECK: scf.if
// CHECK-NOT: memref.load %[[Y]]
// CHECK: %[[NEW:.*]] = arith.addf %{{.*}}, %[[ZERO]] fastmath<reassoc> : f32
// CHECK-NEXT: memref.store %[[NEW]], %[[Y]][%[[ROW]]] : memref<?xf32>
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: memref.load %[[Y]]
// CHECK-NOT: gpu.launch
func.func @exp_sum_fill_folded(%x: memref<?x4096xf32>, %max: memref<?xf32>, %out: memref<?xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x4096xf32>
  %y = memref.alloc(%m) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<?xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %max : memref<?x4096xf32>, memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%a: f32, %mx: f32, %acc: f32):
    %d = arith.subf %a, %mx : f32
    %e = math.exp %d : f32
    %s = arith.addf %e, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  linalg.copy ins(%y : memref<?xf32>) outs(%out : memref<?xf32>)
  memref.dealloc %y : memref<?xf32>
  return
}

// -----

// A bf16 max: the identity is bf16 -inf and the subgroup reduction is on
// bf16 itself (its lowering packs it into 32-bit shuffles).
// CHECK-LABEL: func.func @row_max_bf16
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF80 : bf16
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[NEGINF]]) -> (bf16)
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : bf16
// CHECK: gpu.subgroup_reduce maximumf %{{.*}} uniform : (bf16) -> bf16
// CHECK-NOT: gpu.subgroup_reduce
func.func @row_max_bf16(%x: memref<?x1000xbf16>, %y: memref<?xbf16>) {
  linalg.reduce ins(%x : memref<?x1000xbf16>) outs(%y : memref<?xbf16>) dimensions = [1]
    (%a: bf16, %acc: bf16) {
      %s = arith.maximumf %a, %acc : bf16
      linalg.yield %s : bf16
    }
  return
}

// -----

// A global pool over H*W (two reduction loops, linearized: lane l reads
// points l, l + 32, ... of the H*W plane, delinearized into (h, w)).
// CHECK-LABEL: func.func @global_pool
// CHECK-SAME: (%[[X:.*]]: memref<?x64x56x56xf32>, %[[Y:.*]]: memref<?x64xf32>)
// CHECK-DAG: %[[HW:.*]] = arith.constant 3136 : index
// CHECK: %[[P:.*]]:2 = affine.delinearize_index %{{.*}} into (%{{.*}}, 64) : index, index
// CHECK-NEXT: scf.for %[[R:.*]] = %{{.*}} to %[[HW]] step %c32
// CHECK-NEXT: %[[Q:.*]]:2 = affine.delinearize_index %[[R]] into (56, 56) : index, index
// CHECK-NEXT: memref.load %[[X]][%[[P]]#0, %[[P]]#1, %[[Q]]#0, %[[Q]]#1] : memref<?x64x56x56xf32>
// CHECK: gpu.subgroup_reduce add
// CHECK: memref.store %{{.*}}, %[[Y]][%[[P]]#0, %[[P]]#1] : memref<?x64xf32>
func.func @global_pool(%x: memref<?x64x56x56xf32>, %y: memref<?x64xf32>) {
  linalg.reduce ins(%x : memref<?x64x56x56xf32>) outs(%y : memref<?x64xf32>) dimensions = [2, 3]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// Two outputs, each with its combiner (a row's sum and max): one loop
// carrying both, two subgroup reductions, two stores.
// CHECK-LABEL: func.func @sum_and_max
// CHECK: scf.for {{.*}} -> (f32, f32)
// CHECK: gpu.subgroup_reduce add
// CHECK: gpu.subgroup_reduce maximumf
// CHECK: scf.if
// CHECK: memref.store
// CHECK: memref.store
func.func @sum_and_max(%x: memref<?x?xf32>, %s: memref<?xf32>, %m: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x?xf32>) outs(%s, %m : memref<?xf32>, memref<?xf32>) {
  ^bb0(%a: f32, %sa: f32, %ma: f32):
    %ns = arith.addf %a, %sa : f32
    %nm = arith.maximumf %a, %ma : f32
    linalg.yield %ns, %nm : f32, f32
  }
  return
}

// -----

// A full reduction: one warp (a grid of one block) rather than one thread.
// CHECK-LABEL: func.func @full_reduction
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1, %{{.*}} = %c1, %{{.*}} = %c1) threads({{.*}}) in (%{{.*}} = %c256,
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %c1 : index
// CHECK: affine.delinearize_index %{{.*}} into (%{{.*}}, %{{.*}}) : index, index
// CHECK: gpu.subgroup_reduce add
// CHECK: memref.store %{{.*}}, %{{.*}}[] : memref<f32>
func.func @full_reduction(%x: memref<?x?xf32>, %y: memref<f32>) {
  linalg.reduce ins(%x : memref<?x?xf32>) outs(%y : memref<f32>) dimensions = [0, 1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// Not a warp per point: a short static reduction (16 < 128 points), a
// reduction along a dimension that is not the inputs' innermost index (a
// column sum: consecutive threads already read consecutive columns), and a
// body that reads its accumulator twice (no combiner to split the row by).
// CHECK-LABEL: func.func @thread_per_point
// CHECK-NOT: gpu.subgroup_reduce
// CHECK: function(@thread_per_point_k0_reduce)
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c1
// CHECK-NOT: gpu.subgroup_reduce
// CHECK: function(@thread_per_point_k1_reduce)
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c1
// CHECK-NOT: gpu.subgroup_reduce
// CHECK: function(@thread_per_point_k2_reduce)
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c1
// CHECK-NOT: gpu.subgroup_reduce
// CHECK: return
func.func @thread_per_point(%short: memref<?x16xf32>, %x: memref<?x?xf32>, %y: memref<?xf32>) {
  linalg.reduce ins(%short : memref<?x16xf32>) outs(%y : memref<?xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  linalg.reduce ins(%x : memref<?x?xf32>) outs(%y : memref<?xf32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  linalg.reduce ins(%x : memref<?x?xf32>) outs(%y : memref<?xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      %t = arith.mulf %s, %acc : f32
      linalg.yield %t : f32
    }
  return
}

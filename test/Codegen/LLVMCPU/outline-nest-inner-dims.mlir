// RUN: grove-opt %s -split-input-file --grove-outline-parallel-loops="min-work=1000" | FileCheck %s

// grove-outline-parallel-loops (OutlineParallelLoops.cpp) linearizes fewer
// outer dimensions while one linear iteration would be less work than
// min-iteration-work (256): static inner dimensions join the body as a
// nested scf.parallel, innermost first, as long as the range keeps at
// least 8 (or an unknown number of) iterations. The body then walks them
// as nested loops instead of dividing the range index every few elements.
// Every dimension linearized is in outline-parallel-loops.mlir.

// An im2col-like copy (n, y, x, c, i, j) = (?, 4, 4, 16, 3, 3): j alone is
// 3 elements, i·j 9, c·i·j 144, x·c·i·j 576 >= 256. The range is n·y (only
// y is divided out of it), the body nests (x, c, i, j).
// CHECK-LABEL: func.func @im2col(
// CHECK: %[[N:.*]] = arith.maxsi
// CHECK: %[[RANGE:.*]] = arith.muli %[[N]], %c4{{(_[0-9]+)?}} : index
// CHECK: call @im2col__parallel_0(%{{.*}}, %[[RANGE]],
// CHECK-LABEL: func.func private @im2col__parallel_0(
// CHECK-SAME: grove.parallel_body = 576 : i64
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: %[[Y:.*]] = arith.remui %[[R]], %c4{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[B:.*]] = arith.divui %[[R]], %c4{{(_[0-9]+)?}} : index
// CHECK-NEXT: scf.parallel (%[[X:.*]], %[[C:.*]], %[[I:.*]], %[[J:.*]]) = (%c0{{.*}}, %c0{{.*}}, %c0{{.*}}, %c0{{.*}}) to (%c4{{.*}}, %c16{{.*}}, %c3{{.*}}, %c3{{.*}})
// CHECK-NOT: arith.remui
// CHECK-NOT: arith.divui
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[B]], %[[Y]], %[[X]], %[[C]], %[[I]], %[[J]]]
func.func @im2col(%x: memref<?x16x6x6xf32>, %col: memref<?x4x4x16x3x3xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  scf.parallel (%b, %y, %xx, %c, %i, %j) = (%c0, %c0, %c0, %c0, %c0, %c0)
      to (%n, %c4, %c4, %c16, %c3, %c3) step (%c1, %c1, %c1, %c1, %c1, %c1) {
    %h = arith.addi %y, %i : index
    %w = arith.addi %xx, %j : index
    %v = memref.load %x[%b, %c, %h, %w] : memref<?x16x6x6xf32>
    memref.store %v, %col[%b, %y, %xx, %c, %i, %j] : memref<?x4x4x16x3x3xf32>
    scf.reduce
  }
  return
}

// -----

// (4, 16, 64, 3): 3, then 64·3 = 192 < 256, but taking the 16 in as well
// would leave a range of 4 < 8 iterations: the range stays 4·16.
// CHECK-LABEL: func.func @keeps_parallelism(
// CHECK: call @keeps_parallelism__parallel_0(%{{.*}}, %c64{{(_[0-9]+)?}},
// CHECK-LABEL: func.func private @keeps_parallelism__parallel_0(
// CHECK-SAME: grove.parallel_body = 192 : i64
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%c64{{.*}}, %c3{{.*}})
func.func @keeps_parallelism(%a: memref<4x16x64x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i, %j, %k, %l) = (%c0, %c0, %c0, %c0) to (%c4, %c16, %c64, %c3)
      step (%c1, %c1, %c1, %c1) {
    memref.store %two, %a[%i, %j, %k, %l] : memref<4x16x64x3xf32>
    scf.reduce
  }
  return
}

// -----

// (?, ?, 3): the dimension before the 3 is dynamic, so it stays in the
// range (a body's loops are static).
// CHECK-LABEL: func.func private @dynamic_inner__parallel_0(
// CHECK-SAME: grove.parallel_body = 3 : i64
// CHECK: scf.for %[[R:.*]] =
// CHECK-NEXT: arith.remui %[[R]]
// CHECK-NEXT: arith.divui %[[R]]
// CHECK: scf.parallel (%{{[^)]*}}) = (%{{[^)]*}}) to (%c3
func.func @dynamic_inner(%a: memref<?x?x3xf32>, %n: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%n, %m, %c3)
      step (%c1, %c1, %c1) {
    memref.store %two, %a[%i, %j, %k] : memref<?x?x3xf32>
    scf.reduce
  }
  return
}

// -----

// A reduction (the body loops): every dimension would be linearized, but
// one iteration is 2; the 4 and the 16 join it (work 128), the dynamic
// batch is the range, never divided.
// CHECK-LABEL: func.func private @window__parallel_0(
// CHECK-SAME: grove.parallel_body = 128 : i64
// CHECK: scf.for %[[R:.*]] =
// CHECK-NEXT: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%c16{{.*}}, %c4{{.*}})
// CHECK: scf.for
func.func @window(%a: memref<?x16x8xf32>, %o: memref<?x16x4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  scf.parallel (%b, %c, %x) = (%c0, %c0, %c0) to (%n, %c16, %c4)
      step (%c1, %c1, %c1) {
    scf.for %k = %c0 to %c2 step %c1 {
      %w = arith.addi %x, %x : index
      %p = arith.addi %w, %k : index
      %v = memref.load %a[%b, %c, %p] : memref<?x16x8xf32>
      %m = memref.load %o[%b, %c, %x] : memref<?x16x4xf32>
      %s = arith.maximumf %v, %m : f32
      memref.store %s, %o[%b, %c, %x] : memref<?x16x4xf32>
    }
    scf.reduce
  }
  return
}

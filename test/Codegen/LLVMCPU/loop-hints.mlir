// RUN: grove-opt %s --grove-host-loop-hints | FileCheck %s
// RUN: grove-opt %s --grove-host-loop-hints="min-trip-count=4" | FileCheck %s --check-prefix=MIN4
// RUN: grove-opt %s --grove-host-loop-hints="min-trip-count=32" | FileCheck %s --check-prefix=MIN32
// RUN: grove-opt %s --grove-host-loop-hints --convert-scf-to-cf | FileCheck %s --check-prefix=CF
// RUN: grove-opt %s --grove-host-loop-hints --mlir-print-local-scope | FileCheck %s --check-prefix=PAR
// RUN: grove-opt %s --grove-host-loop-hints="min-trip-count=4" --mlir-print-local-scope | FileCheck %s --check-prefix=PAR4
// RUN: grove-opt %s --grove-host-loop-hints="min-trip-count=32" --mlir-print-local-scope | FileCheck %s --check-prefix=PAR32

// grove-host-loop-hints (LoopHints.cpp):
// * a reduction accumulator (load M[I] ... store M[I] in an scf.for, M and I
//   from outside) becomes an iter_arg (@accumulators), unless another load
//   in the loop reads a view of M's buffer (@accumulator_views);
// * every innermost scf.parallel without results (no loop nested in it)
//   becomes nested scf.for loops. When its innermost trip count is a
//   constant below min-trip-count, none of them is annotated: short rows
//   are left to LLVM's full unroller (@parallel_short). Otherwise, when its
//   body only loads, stores with the innermost induction variable among the
//   store indices and otherwise has no memory effects, the innermost
//   scf.for gets
//   #llvm.loop_annotation<unroll = <disable = true>, parallelAccesses = G>
//   with a fresh access group G per loop; else it is treated like any
//   innermost scf.for;
// * every other innermost scf.for whose trip count is unknown or at least
//   min-trip-count (16 by default) gets
//   #llvm.loop_annotation<unroll = <disable = true>>, with
//   interleave = <count = 4> added when it carries a float sum that may be
//   reassociated and its trip count is unknown or at least 128
//   (@reassociable_sums); shorter constant loops and loops with a loop
//   nested in them are left alone.
// grove-host-loop-metadata (loop-metadata.mlir) completes the annotations in
// the LLVM dialect.

// CHECK-DAG: #[[$UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK-DAG: #[[$ANN:.*]] = #llvm.loop_annotation<unroll = #[[$UNROLL]]>
// CHECK-DAG: #[[$IL:.*]] = #llvm.loop_interleave<count = 4 : i32>
// CHECK-DAG: #[[$ANN_IL:.*]] = #llvm.loop_annotation<interleave = #[[$IL]], unroll = #[[$UNROLL]]>
// MIN4-DAG: #[[$UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// MIN4-DAG: #[[$ANN:.*]] = #llvm.loop_annotation<unroll = #[[$UNROLL]]>
// MIN32-DAG: #[[$UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// MIN32-DAG: #[[$ANN:.*]] = #llvm.loop_annotation<unroll = #[[$UNROLL]]>

// Unknown upper bound, unknown step: annotated whatever the threshold.
// CHECK-LABEL: func.func @unknown_trip_count(
// CHECK: scf.for
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: } {llvm.loop_annotation = #[[$ANN]]}
// CHECK: scf.for
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: } {llvm.loop_annotation = #[[$ANN]]}
// MIN32-LABEL: func.func @unknown_trip_count(
// MIN32-COUNT-2: } {llvm.loop_annotation = #[[$ANN]]}
// MIN32-NEXT: return
func.func @unknown_trip_count(%m: memref<?xf32>, %n: index, %s: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %m[%i] : memref<?xf32>
    memref.store %v, %m[%i] : memref<?xf32>
  }
  scf.for %i = %c0 to %c64 step %s {
    %v = memref.load %m[%i] : memref<?xf32>
    memref.store %v, %m[%i] : memref<?xf32>
  }
  return
}

// Constant trip counts around the default threshold: ceil((ub - lb) / step)
// is what counts, not ub.
// CHECK-LABEL: func.func @constant_trip_count(
// 0 to 16: 16 iterations, annotated.
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c1 {
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: } {llvm.loop_annotation = #[[$ANN]]}
// 0 to 15: 15 iterations, left to full unrolling.
// CHECK: scf.for %{{.*}} = %c0 to %c15 step %c1 {
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: {{^ *}}}{{$}}
// 0 to 63 step 4: 16 iterations (rounded up), annotated.
// CHECK: scf.for %{{.*}} = %c0 to %c63 step %c4 {
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: } {llvm.loop_annotation = #[[$ANN]]}
// 0 to 60 step 4: 15 iterations.
// CHECK: scf.for %{{.*}} = %c0 to %c60 step %c4 {
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: {{^ *}}}{{$}}
// 10 to 25: 15 iterations although the upper bound is above 16.
// CHECK: scf.for %{{.*}} = %c10 to %c25 step %c1 {
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: {{^ *}}}{{$}}
// 10 to 1000: annotated.
// CHECK: scf.for %{{.*}} = %c10 to %c1000 step %c1 {
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: } {llvm.loop_annotation = #[[$ANN]]}
// 25 to 10: no iteration at all.
// CHECK: scf.for %{{.*}} = %c25 to %c10 step %c1 {
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK-NEXT: return

// min-trip-count=4: only the empty loop stays unannotated.
// MIN4-LABEL: func.func @constant_trip_count(
// MIN4-COUNT-6: } {llvm.loop_annotation = #[[$ANN]]}
// MIN4-NEXT: scf.for %{{.*}} = %c25 to %c10 step %c1 {
// MIN4-NEXT: memref.load
// MIN4-NEXT: memref.store
// MIN4-NEXT: {{^ *}}}{{$}}
// MIN4-NEXT: return

// min-trip-count=32: only 10 to 1000 is annotated.
// MIN32-LABEL: func.func @constant_trip_count(
// MIN32-NOT: llvm.loop_annotation
// MIN32: scf.for %{{.*}} = %c10 to %c1000 step %c1 {
// MIN32-NEXT: memref.load
// MIN32-NEXT: memref.store
// MIN32-NEXT: } {llvm.loop_annotation = #[[$ANN]]}
// MIN32-NOT: llvm.loop_annotation
// MIN32: return
func.func @constant_trip_count(%m: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c10 = arith.constant 10 : index
  %c15 = arith.constant 15 : index
  %c16 = arith.constant 16 : index
  %c25 = arith.constant 25 : index
  %c60 = arith.constant 60 : index
  %c63 = arith.constant 63 : index
  %c1000 = arith.constant 1000 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %m[%i] : memref<?xf32>
    memref.store %v, %m[%i] : memref<?xf32>
  }
  scf.for %i = %c0 to %c15 step %c1 {
    %v = memref.load %m[%i] : memref<?xf32>
    memref.store %v, %m[%i] : memref<?xf32>
  }
  scf.for %i = %c0 to %c63 step %c4 {
    %v = memref.load %m[%i] : memref<?xf32>
    memref.store %v, %m[%i] : memref<?xf32>
  }
  scf.for %i = %c0 to %c60 step %c4 {
    %v = memref.load %m[%i] : memref<?xf32>
    memref.store %v, %m[%i] : memref<?xf32>
  }
  scf.for %i = %c10 to %c25 step %c1 {
    %v = memref.load %m[%i] : memref<?xf32>
    memref.store %v, %m[%i] : memref<?xf32>
  }
  scf.for %i = %c10 to %c1000 step %c1 {
    %v = memref.load %m[%i] : memref<?xf32>
    memref.store %v, %m[%i] : memref<?xf32>
  }
  scf.for %i = %c25 to %c10 step %c1 {
    %v = memref.load %m[%i] : memref<?xf32>
    memref.store %v, %m[%i] : memref<?xf32>
  }
  return
}

// Only the innermost loop of a nest is annotated; a long outer loop around a
// short inner one gets nothing either. Any loop-like op nested in the body
// (scf.for, scf.parallel, scf.while) makes a loop non-innermost. The
// scf.parallel here stores to %m[%i], not indexed by its own induction
// variable: it becomes an scf.for with the plain annotation (unknown trip
// count), no access group.
// CHECK-LABEL: func.func @nests(
// CHECK: scf.for %[[I:.*]] = %c0 to %c1000 step %c1 {
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c1000 step %c1 {
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: } {llvm.loop_annotation = #[[$ANN]]}
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK: scf.for %{{.*}} = %c0 to %c1000 step %c1 {
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c3 step %c1 {
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK: scf.for %{{.*}} = %c0 to %c1000 step %c1 {
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %arg1 step %c1 {
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: } {llvm.loop_annotation = #[[$ANN]]}
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK: scf.for %{{.*}} = %c0 to %c1000 step %c1 {
// CHECK-NEXT: scf.while
// CHECK: memref.store
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK-NEXT: return
func.func @nests(%m: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c1000 = arith.constant 1000 : index
  scf.for %i = %c0 to %c1000 step %c1 {
    scf.for %j = %c0 to %c1000 step %c1 {
      %v = memref.load %m[%j] : memref<?xf32>
      memref.store %v, %m[%i] : memref<?xf32>
    }
  }
  scf.for %i = %c0 to %c1000 step %c1 {
    scf.for %j = %c0 to %c3 step %c1 {
      %v = memref.load %m[%j] : memref<?xf32>
      memref.store %v, %m[%i] : memref<?xf32>
    }
  }
  scf.for %i = %c0 to %c1000 step %c1 {
    scf.parallel (%j) = (%c0) to (%n) step (%c1) {
      %v = memref.load %m[%j] : memref<?xf32>
      memref.store %v, %m[%i] : memref<?xf32>
    }
  }
  scf.for %i = %c0 to %c1000 step %c1 {
    %r = scf.while (%j = %c0) : (index) -> index {
      %more = arith.cmpi slt, %j, %n : index
      scf.condition(%more) %j : index
    } do {
    ^bb0(%j: index):
      %next = arith.addi %j, %c1 : index
      scf.yield %next : index
    }
    %v = memref.load %m[%r] : memref<?xf32>
    memref.store %v, %m[%i] : memref<?xf32>
  }
  return
}

// An innermost scf.for inside an scf.parallel is annotated (the parallel
// loop, with a loop nested in it, stays as it is); so is one carrying
// iter_args.
// CHECK-LABEL: func.func @in_parallel(
// CHECK: scf.parallel
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: } {llvm.loop_annotation = #[[$ANN]]}
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK: scf.for {{.*}} iter_args
// CHECK-NEXT: memref.load
// CHECK-NEXT: arith.addf
// CHECK-NEXT: scf.yield
// CHECK-NEXT: } {llvm.loop_annotation = #[[$ANN]]}
func.func @in_parallel(%m: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %c64 step %c1 {
      %v = memref.load %m[%j] : memref<?xf32>
      memref.store %v, %m[%i] : memref<?xf32>
    }
  }
  %sum = scf.for %j = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %m[%j] : memref<?xf32>
    %next = arith.addf %acc, %v : f32
    scf.yield %next : f32
  }
  return %sum : f32
}

// Innermost scf.parallel loops whose iterations write disjoint elements
// become scf.for loops; the innermost one, when its trip count is unknown or
// at least min-trip-count (unknown and 64 here), carries an access group of its own
// in parallelAccesses (printed inline here, --mlir-print-local-scope: the
// printer numbers distinct attributes in order of appearance, so a group
// shared by two loops would show the same number twice) and unroll disabled.
// Outer loops of a rewritten nest get nothing.
// 1-D, unknown trip count.
// PAR-LABEL: func.func @parallel_1d(
// PAR-SAME: %[[A:[^:]*]]: memref<?xf32>, %[[B:[^:]*]]: memref<?xf32>, %[[N:[^:]*]]: index)
// PAR-NOT: scf.parallel
// PAR: scf.for %[[I:.*]] = %c0 to %[[N]] step %c1 {
// PAR-NEXT: %[[V:.*]] = memref.load %[[A]][%[[I]]] : memref<?xf32>
// PAR-NEXT: %[[W:.*]] = arith.mulf %[[V]], %{{.*}} : f32
// PAR-NEXT: memref.store %[[W]], %[[B]][%[[I]]] : memref<?xf32>
// PAR-NEXT: } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>, parallelAccesses = <id = distinct[0]<>>>}
// PAR-NEXT: return
func.func @parallel_1d(%a: memref<?xf32>, %b: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %a[%i] : memref<?xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %b[%i] : memref<?xf32>
  }
  return
}

// 2-D: the dimensions nest in order, the last innermost; only that one is
// annotated, with a new group. The innermost induction variable may be any
// of the store's indices (a transpose).
// PAR-LABEL: func.func @parallel_2d(
// PAR-SAME: %[[A:[^:]*]]: memref<?x?xf32>, %[[B:[^:]*]]: memref<?x?xf32>, %[[N:[^:]*]]: index)
// PAR-NOT: scf.parallel
// PAR: scf.for %[[I:.*]] = %c0 to %[[N]] step %c1 {
// PAR-NEXT: scf.for %[[J:.*]] = %c0 to %c64 step %c1 {
// PAR-NEXT: %[[V:.*]] = memref.load %[[A]][%[[I]], %[[J]]] : memref<?x?xf32>
// PAR-NEXT: memref.store %[[V]], %[[B]][%[[J]], %[[I]]] : memref<?x?xf32>
// PAR-NEXT: } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>, parallelAccesses = <id = distinct[1]<>>>}
// PAR-NEXT: {{^ *}}}{{$}}
// PAR-NEXT: return
// With the default printer the same: the inner loop's annotation, never the
// outer's.
// CHECK-LABEL: func.func @parallel_2d(
// CHECK: scf.for
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: } {llvm.loop_annotation = #[[$P2D:loop_annotation[0-9]*]]}
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK-NEXT: return
func.func @parallel_2d(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c64) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<?x?xf32>
    memref.store %v, %b[%j, %i] : memref<?x?xf32>
  }
  return
}

// A parallel loop whose innermost trip count is a constant below
// min-trip-count (16 by default; ceil((ub - lb) / step) is what counts)
// still becomes scf.for loops, but none of them is annotated, neither access
// group nor unroll hint: short rows are left to LLVM's full unroller. 4 and
// 15 iterations: nothing; 16, and 0 to 63 step 4 (16 rounded up): the access
// group. A 2-D loop with a short innermost dimension (7) gets nothing on
// either loop, however long the outer one; a short outer dimension (3) does
// not matter when the innermost one is long (unknown here).
// PAR-LABEL: func.func @parallel_short(
// PAR-SAME: %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?x?xf32>, %[[N:[^:]*]]: index)
// PAR-NOT: scf.parallel
// PAR: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// PAR-NEXT: memref.store
// PAR-NEXT: {{^ *}}}{{$}}
// PAR-NEXT: scf.for %{{.*}} = %c0 to %c15 step %c1 {
// PAR-NEXT: memref.store
// PAR-NEXT: {{^ *}}}{{$}}
// PAR-NEXT: scf.for %{{.*}} = %c0 to %c16 step %c1 {
// PAR-NEXT: memref.store
// PAR-NEXT: } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>, parallelAccesses = <id = distinct[2]<>>>}
// PAR-NEXT: scf.for %{{.*}} = %c0 to %c63 step %c4 {
// PAR-NEXT: memref.store
// PAR-NEXT: } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>, parallelAccesses = <id = distinct[3]<>>>}
// PAR-NEXT: scf.for %{{.*}} = %c0 to %[[N]] step %c1 {
// PAR-NEXT: scf.for %{{.*}} = %c0 to %c7 step %c1 {
// PAR-NEXT: memref.store
// PAR-NEXT: {{^ *}}}{{$}}
// PAR-NEXT: {{^ *}}}{{$}}
// PAR-NEXT: scf.for %{{.*}} = %c0 to %c3 step %c1 {
// PAR-NEXT: scf.for %{{.*}} = %c0 to %[[N]] step %c1 {
// PAR-NEXT: memref.store
// PAR-NEXT: } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>, parallelAccesses = <id = distinct[4]<>>>}
// PAR-NEXT: {{^ *}}}{{$}}
// PAR-NEXT: return
// min-trip-count=4 lowers the threshold: every one of them gets an access
// group of its own on its innermost loop (groups 2 to 7).
// PAR4-LABEL: func.func @parallel_short(
// PAR4-SAME: %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?x?xf32>, %[[N:[^:]*]]: index)
// PAR4-NOT: scf.parallel
// PAR4: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// PAR4-NEXT: memref.store
// PAR4-NEXT: } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>, parallelAccesses = <id = distinct[2]<>>>}
// PAR4-NEXT: scf.for %{{.*}} = %c0 to %c15 step %c1 {
// PAR4-NEXT: memref.store
// PAR4-NEXT: } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>, parallelAccesses = <id = distinct[3]<>>>}
// PAR4-NEXT: scf.for %{{.*}} = %c0 to %c16 step %c1 {
// PAR4-NEXT: memref.store
// PAR4-NEXT: } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>, parallelAccesses = <id = distinct[4]<>>>}
// PAR4-NEXT: scf.for %{{.*}} = %c0 to %c63 step %c4 {
// PAR4-NEXT: memref.store
// PAR4-NEXT: } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>, parallelAccesses = <id = distinct[5]<>>>}
// PAR4-NEXT: scf.for %{{.*}} = %c0 to %[[N]] step %c1 {
// PAR4-NEXT: scf.for %{{.*}} = %c0 to %c7 step %c1 {
// PAR4-NEXT: memref.store
// PAR4-NEXT: } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>, parallelAccesses = <id = distinct[6]<>>>}
// PAR4-NEXT: {{^ *}}}{{$}}
// PAR4-NEXT: scf.for %{{.*}} = %c0 to %c3 step %c1 {
// PAR4-NEXT: scf.for %{{.*}} = %c0 to %[[N]] step %c1 {
// PAR4-NEXT: memref.store
// PAR4-NEXT: } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>, parallelAccesses = <id = distinct[7]<>>>}
// PAR4-NEXT: {{^ *}}}{{$}}
// PAR4-NEXT: return
// min-trip-count=32 raises it: 16 iterations are too few as well; only the
// loop of unknown innermost trip count is annotated.
// PAR32-LABEL: func.func @parallel_short(
// PAR32-SAME: %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?x?xf32>, %[[N:[^:]*]]: index)
// PAR32-NOT: scf.parallel
// PAR32-NOT: llvm.loop_annotation
// PAR32: scf.for %{{.*}} = %c0 to %c3 step %c1 {
// PAR32-NEXT: scf.for %{{.*}} = %c0 to %[[N]] step %c1 {
// PAR32-NEXT: memref.store
// PAR32-NEXT: } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>, parallelAccesses = <id = distinct[2]<>>>}
// PAR32-NEXT: {{^ *}}}{{$}}
// PAR32-NEXT: return
func.func @parallel_short(%a: memref<?xf32>, %b: memref<?x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c7 = arith.constant 7 : index
  %c15 = arith.constant 15 : index
  %c16 = arith.constant 16 : index
  %c63 = arith.constant 63 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %two, %a[%i] : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%c15) step (%c1) {
    memref.store %two, %a[%i] : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    memref.store %two, %a[%i] : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%c63) step (%c4) {
    memref.store %two, %a[%i] : memref<?xf32>
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c7) step (%c1, %c1) {
    memref.store %two, %b[%i, %j] : memref<?x?xf32>
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c3, %n) step (%c1, %c1) {
    memref.store %two, %b[%i, %j] : memref<?x?xf32>
  }
  return
}

// Parallel loops whose iterations may touch the same element, or that do
// anything but load, store and compute, get no access group. Without
// results and with no loop nested in them they still become scf.for loops,
// annotated like any innermost scf.for (unroll disabled when the trip count
// is unknown or at least min-trip-count):
// * a store whose indices do not include the innermost induction variable
//   (%a[%i] in the 2-D loop, %a[%c0] in the 1-D one);
// * a func.call in the body.
// A loop nested in the body, or results (a reduction), leave the scf.parallel
// as it is.
// PAR-LABEL: func.func @not_parallel(
// PAR-NOT: parallelAccesses
// PAR-NOT: access_group
// PAR: return
// CHECK-LABEL: func.func @not_parallel(
// CHECK-SAME: %[[A:[^:]*]]: memref<?xf32>, %[[B:[^:]*]]: memref<?x?xf32>, %[[N:[^:]*]]: index)
// CHECK: scf.for %[[I:.*]] = %c0 to %[[N]] step %c1 {
// CHECK-NEXT: scf.for %[[J:.*]] = %c0 to %c64 step %c1 {
// CHECK-NEXT: %[[V:.*]] = memref.load %[[B]][%[[I]], %[[J]]]
// CHECK-NEXT: memref.store %[[V]], %[[A]][%[[I]]]
// CHECK-NEXT: } {llvm.loop_annotation = #[[$ANN]]}
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK-NEXT: scf.for %[[K:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT: memref.load %[[B]][%[[K]], %[[K]]]
// CHECK-NEXT: memref.store %{{.*}}, %[[A]][%c0]
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %[[N]] step %c1 {
// CHECK-NEXT: memref.load
// CHECK-NEXT: func.call @use(
// CHECK-NEXT: memref.store
// CHECK-NEXT: } {llvm.loop_annotation = #[[$ANN]]}
// CHECK-NEXT: scf.parallel (%{{.*}}) = (%c0) to (%[[N]]) step (%c1) {
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%[[N]]) step (%c1) init (%{{.*}}) -> f32 {
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: scf.reduce(
// CHECK-NOT: llvm.loop_annotation
// CHECK: return
// The 4-iteration loop is annotated from min-trip-count=4 on.
// MIN4-LABEL: func.func @not_parallel(
// MIN4: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// MIN4-NEXT: memref.load
// MIN4-NEXT: memref.store
// MIN4-NEXT: } {llvm.loop_annotation = #[[$ANN]]}
func.func private @use(f32)
func.func @not_parallel(%a: memref<?xf32>, %b: memref<?x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c64) step (%c1, %c1) {
    %v = memref.load %b[%i, %j] : memref<?x?xf32>
    memref.store %v, %a[%i] : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %b[%i, %i] : memref<?x?xf32>
    memref.store %v, %a[%c0] : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %a[%i] : memref<?xf32>
    func.call @use(%v) : (f32) -> ()
    memref.store %v, %a[%i] : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %b[%i, %j] : memref<?x?xf32>
      memref.store %v, %b[%j, %i] : memref<?x?xf32>
    }
  }
  %r = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %v = memref.load %a[%i] : memref<?xf32>
    memref.store %v, %a[%i] : memref<?xf32>
    scf.reduce(%v : f32) {
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %y : f32
      scf.reduce.return %s : f32
    }
  }
  memref.store %r, %a[%c0] : memref<?xf32>
  return
}

// Before the annotations, a reduction's accumulator moves into a register:
// an scf.for whose only store is to M[I] (M and I defined outside the loop)
// and whose only access to M is one load of M[I] before that store, with
// nothing else writing memory, loads M[I] before the loop, carries it as an
// iter_arg and stores it after the loop. Innermost loops go first, so an
// enclosing loop that then has load / loop / store is promoted too when its
// indices allow (M[%c0] here, not M[%i]). The annotations follow as usual,
// on the innermost loop only.
// CHECK-LABEL: func.func @accumulators(
// CHECK-SAME: %[[A:[^:]*]]: memref<?x?xf32>, %[[C:[^:]*]]: memref<?xf32>, %[[N:[^:]*]]: index, %[[M:[^:]*]]: index)
// CHECK: scf.for %[[I:.*]] = %c0 to %[[N]] step %c1 {
// CHECK-NEXT: %[[INIT:.*]] = memref.load %[[C]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: %[[R:.*]] = scf.for %[[K:.*]] = %c0 to %[[M]] step %c1 iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT: %[[X:.*]] = memref.load %[[A]][%[[I]], %[[K]]] : memref<?x?xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[X]] : f32
// CHECK-NEXT: scf.yield %[[S]] : f32
// CHECK-NEXT: } {llvm.loop_annotation = #[[$ANN]]}
// CHECK-NEXT: memref.store %[[R]], %[[C]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK-NEXT: %[[INIT2:.*]] = memref.load %[[C]][%c0] : memref<?xf32>
// CHECK-NEXT: %[[R2:.*]] = scf.for %[[I2:.*]] = %c0 to %[[N]] step %c1 iter_args(%[[ACC2:.*]] = %[[INIT2]]) -> (f32) {
// CHECK-NEXT: %[[R3:.*]] = scf.for %[[K2:.*]] = %c0 to %[[M]] step %c1 iter_args(%[[ACC3:.*]] = %[[ACC2]]) -> (f32) {
// CHECK-NEXT: %[[X2:.*]] = memref.load %[[A]][%[[I2]], %[[K2]]] : memref<?x?xf32>
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[ACC3]], %[[X2]] : f32
// CHECK-NEXT: scf.yield %[[S2]] : f32
// CHECK-NEXT: } {llvm.loop_annotation = #[[$ANN]]}
// CHECK-NEXT: scf.yield %[[R3]] : f32
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK-NEXT: memref.store %[[R2]], %[[C]][%c0] : memref<?xf32>
// CHECK-NEXT: return
func.func @accumulators(%a: memref<?x?xf32>, %c: memref<?xf32>, %n: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    scf.for %k = %c0 to %m step %c1 {
      %acc = memref.load %c[%i] : memref<?xf32>
      %x = memref.load %a[%i, %k] : memref<?x?xf32>
      %s = arith.addf %acc, %x : f32
      memref.store %s, %c[%i] : memref<?xf32>
    }
  }
  scf.for %i = %c0 to %n step %c1 {
    scf.for %k = %c0 to %m step %c1 {
      %acc = memref.load %c[%c0] : memref<?xf32>
      %x = memref.load %a[%i, %k] : memref<?x?xf32>
      %s = arith.addf %acc, %x : f32
      memref.store %s, %c[%c0] : memref<?xf32>
    }
  }
  return
}

// Not accumulators: a call in the body; a second store; the load after the
// store; indices that change with the loop; another load of the same
// memref. No loop gets an iter_arg.
// CHECK-LABEL: func.func @not_accumulators(
// CHECK-NOT: iter_args
// CHECK: return
func.func @not_accumulators(%a: memref<?xf32>, %c: memref<?xf32>, %d: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %k = %c0 to %n step %c1 {
    %acc = memref.load %c[%c0] : memref<?xf32>
    func.call @use(%acc) : (f32) -> ()
    memref.store %acc, %c[%c0] : memref<?xf32>
  }
  scf.for %k = %c0 to %n step %c1 {
    %acc = memref.load %c[%c0] : memref<?xf32>
    memref.store %acc, %c[%c0] : memref<?xf32>
    memref.store %acc, %d[%c0] : memref<?xf32>
  }
  scf.for %k = %c0 to %n step %c1 {
    %x = memref.load %a[%k] : memref<?xf32>
    memref.store %x, %c[%c0] : memref<?xf32>
    %acc = memref.load %c[%c0] : memref<?xf32>
    memref.store %acc, %d[%k] : memref<?xf32>
  }
  scf.for %k = %c0 to %n step %c1 {
    %acc = memref.load %c[%k] : memref<?xf32>
    %x = memref.load %a[%k] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %c[%k] : memref<?xf32>
  }
  scf.for %k = %c0 to %n step %c1 {
    %acc = memref.load %c[%c0] : memref<?xf32>
    %x = memref.load %c[%c1] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %c[%c0] : memref<?xf32>
  }
  return
}

// Views: the other loads may read views (memref.subview here), as long as
// none is a view of the accumulator's buffer (following view sources,
// ViewLikeOpInterface, back to the buffer). A subview of another buffer
// (%a) is no obstacle, and neither is an accumulator that is itself a view
// of %c while the other load reads %a: both loops are promoted.
// CHECK-LABEL: func.func @accumulator_views(
// CHECK-SAME: %[[A:[^:]*]]: memref<?xf32>, %[[C:[^:]*]]: memref<?xf32>, %[[N:[^:]*]]: index)
// CHECK-DAG: %[[VA:.*]] = memref.subview %[[A]][%c4] [%[[N]]] [1]
// CHECK-DAG: %[[VC:.*]] = memref.subview %[[C]][%c4] [4] [1]
// CHECK: %[[INIT:.*]] = memref.load %[[C]][%c0] : memref<?xf32>
// CHECK-NEXT: %[[R:.*]] = scf.for %[[K:.*]] = %c0 to %[[N]] step %c1 iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT: %[[X:.*]] = memref.load %[[VA]][%[[K]]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[X]] : f32
// CHECK-NEXT: scf.yield %[[S]] : f32
// CHECK-NEXT: } {llvm.loop_annotation = #[[$ANN]]}
// CHECK-NEXT: memref.store %[[R]], %[[C]][%c0] : memref<?xf32>
// CHECK-NEXT: %[[INIT2:.*]] = memref.load %[[VC]][%c1]
// CHECK-NEXT: %[[R2:.*]] = scf.for %[[K2:.*]] = %c0 to %[[N]] step %c1 iter_args(%[[ACC2:.*]] = %[[INIT2]]) -> (f32) {
// CHECK-NEXT: %[[X2:.*]] = memref.load %[[A]][%[[K2]]] : memref<?xf32>
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[ACC2]], %[[X2]] : f32
// CHECK-NEXT: scf.yield %[[S2]] : f32
// CHECK-NEXT: } {llvm.loop_annotation = #[[$ANN]]}
// CHECK-NEXT: memref.store %[[R2]], %[[VC]][%c1]
// CHECK-NEXT: return
func.func @accumulator_views(%a: memref<?xf32>, %c: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %va = memref.subview %a[%c4] [%n] [1] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %vc = memref.subview %c[%c4] [4] [1] : memref<?xf32> to memref<4xf32, strided<[1], offset: ?>>
  scf.for %k = %c0 to %n step %c1 {
    %acc = memref.load %c[%c0] : memref<?xf32>
    %x = memref.load %va[%k] : memref<?xf32, strided<[1], offset: ?>>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %c[%c0] : memref<?xf32>
  }
  scf.for %k = %c0 to %n step %c1 {
    %acc = memref.load %vc[%c1] : memref<4xf32, strided<[1], offset: ?>>
    %x = memref.load %a[%k] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %vc[%c1] : memref<4xf32, strided<[1], offset: ?>>
  }
  return
}

// Not accumulators: another load reads a view of the stored buffer, which
// may be the very element the loop accumulates into (every iteration would
// then have to see the previous one's store; loop-hints-exec.mlir runs
// such a loop). The other load reads a subview of %c while the loop
// accumulates into %c; the loop accumulates into a subview of %c while the
// other load reads %c itself; two different subviews of %c; a subview of a
// memref.cast of %c (a chain of views); a subview of %c read in a nested
// region. No loop gets an iter_arg.
// CHECK-LABEL: func.func @accumulator_view_aliases(
// CHECK-NOT: iter_args
// CHECK: return
func.func @accumulator_view_aliases(%c: memref<?xf32>, %n: index, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = memref.subview %c[0] [4] [1] : memref<?xf32> to memref<4xf32, strided<[1]>>
  %w = memref.subview %c[4] [4] [1] : memref<?xf32> to memref<4xf32, strided<[1], offset: 4>>
  %cast = memref.cast %c : memref<?xf32> to memref<8xf32>
  %cv = memref.subview %cast[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
  scf.for %k = %c0 to %n step %c1 {
    %acc = memref.load %c[%c0] : memref<?xf32>
    %x = memref.load %v[%c0] : memref<4xf32, strided<[1]>>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %c[%c0] : memref<?xf32>
  }
  scf.for %k = %c0 to %n step %c1 {
    %acc = memref.load %v[%c1] : memref<4xf32, strided<[1]>>
    %x = memref.load %c[%c1] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %v[%c1] : memref<4xf32, strided<[1]>>
  }
  scf.for %k = %c0 to %n step %c1 {
    %acc = memref.load %v[%c0] : memref<4xf32, strided<[1]>>
    %x = memref.load %w[%c0] : memref<4xf32, strided<[1], offset: 4>>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %v[%c0] : memref<4xf32, strided<[1]>>
  }
  scf.for %k = %c0 to %n step %c1 {
    %acc = memref.load %c[%c0] : memref<?xf32>
    %x = memref.load %cv[%c0] : memref<4xf32, strided<[1], offset: 2>>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %c[%c0] : memref<?xf32>
  }
  scf.for %k = %c0 to %n step %c1 {
    %acc = memref.load %c[%c0] : memref<?xf32>
    %x = scf.if %p -> f32 {
      %y = memref.load %v[%c0] : memref<4xf32, strided<[1]>>
      scf.yield %y : f32
    } else {
      scf.yield %acc : f32
    }
    %s = arith.addf %acc, %x : f32
    memref.store %s, %c[%c0] : memref<?xf32>
  }
  return
}

// Floating-point sums with the reassoc flag (what linalg reductions get) are
// interleaved: LLVM keeps four partial sums instead of one. Without the flag
// the sum's order is fixed, so no interleaving; integer sums neither; nor
// constant trip counts below 128 (64 here), where four vector accumulators
// would leave little or nothing to the vector loop; 128 is enough.
// CHECK-LABEL: func.func @reassociable_sums(
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.addf {{.*}} fastmath<reassoc>
// CHECK: } {llvm.loop_annotation = #[[$ANN_IL]]}
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.addf
// CHECK: } {llvm.loop_annotation = #[[$ANN]]}
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.addi
// CHECK: } {llvm.loop_annotation = #[[$ANN]]}
// CHECK: scf.for {{.*}} = %c0 to %c64 step %c1 iter_args
// CHECK: arith.addf {{.*}} fastmath<reassoc>
// CHECK: } {llvm.loop_annotation = #[[$ANN]]}
// CHECK: scf.for {{.*}} = %c0 to %c128 step %c1 iter_args
// CHECK: arith.addf {{.*}} fastmath<reassoc>
// CHECK: } {llvm.loop_annotation = #[[$ANN_IL]]}
func.func @reassociable_sums(%a: memref<?xf32>, %b: memref<?xi32>, %n: index) -> (f32, f32, i32, f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %izero = arith.constant 0 : i32
  %fast = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %a[%i] : memref<?xf32>
    %s = arith.addf %acc, %x fastmath<reassoc> : f32
    scf.yield %s : f32
  }
  %strict = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %a[%i] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    scf.yield %s : f32
  }
  %int = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %izero) -> i32 {
    %x = memref.load %b[%i] : memref<?xi32>
    %s = arith.addi %acc, %x : i32
    scf.yield %s : i32
  }
  %short = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %a[%i] : memref<?xf32>
    %s = arith.addf %acc, %x fastmath<reassoc> : f32
    scf.yield %s : f32
  }
  %long = scf.for %i = %c0 to %c128 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %a[%i] : memref<?xf32>
    %s = arith.addf %acc, %x fastmath<reassoc> : f32
    scf.yield %s : f32
  }
  return %fast, %strict, %int, %short, %long : f32, f32, i32, f32, f32
}

// scf-to-cf carries the annotation to the back edge of the lowered loop.
// CF-LABEL: func.func @unknown_trip_count(
// CF: ^bb2:
// CF: cf.br ^bb1(%{{.*}} : index) {llvm.loop_annotation = #{{.*}}}
// The parallel loop's annotation, access group included, goes the same way.
// CF-LABEL: func.func @parallel_1d(
// CF: cf.br ^bb1(%{{.*}} : index) {llvm.loop_annotation = #[[$PANN:loop_annotation[0-9]*]]}
// CF-NOT: cf.br {{.*}}llvm.loop_annotation
// CF: return

// RUN: grove-opt %s --grove-outline-parallel-loops="min-iteration-work=0" | FileCheck %s
// RUN: grove-opt %s --grove-outline-parallel-loops="min-work=100 min-iteration-work=0" | FileCheck %s --check-prefix=MIN100
// RUN: grove-opt %s --grove-outline-parallel-loops="min-iteration-work=0" | grove-opt --grove-outline-parallel-loops | FileCheck %s --check-prefix=TWICE

// Here every outer dimension is linearized (min-iteration-work=0); how
// short inner dimensions join the body instead is in
// outline-nest-inner-dims.mlir.

// grove-outline-parallel-loops (OutlineParallelLoops.cpp): each outermost
// scf.parallel without results whose work (constant trip counts, its own
// times its nested loops') is unknown or at least min-work (32768) becomes
// a private function @<f>__parallel_<n>(lo, hi, captures...) marked
// grove.parallel_body = <work of one linear iteration, 0 if unknown> that
// runs linear iterations [lo, hi) of the outer dimensions: all but the last
// (which stays an scf.parallel), or all of them when the body has a loop of
// its own (a reduction: the innermost dimension is not the one to vectorize)
// or the outer ones are known to have fewer than 8 iterations. The range
// loop is an scf.for, or an scf.parallel when it covers every dimension and
// the body does not loop (it is then the innermost, vectorizable loop). The
// delinearization folds a unit step or a zero lower bound. The loop
// becomes a call over
// [0, product of the outer trip counts); the trip counts are folded where
// the bounds are constant. Constants are cloned into the function,
// everything else it uses is passed, including the trip counts of outer
// dimensions 1.. that delinearization divides by when they are not
// constant (the outermost one's is never needed). A nested loop with a
// constant trip count of 0 is skipped in the work of an iteration: it does
// not make the work of its siblings vanish. A loop whose own inner
// dimensions are known to be empty (work 0) is not outlined. That the
// rewritten IR computes the same thing is checked by running it in
// parallel-loops-exec.mlir.

// 1-D: the only dimension is the linear range, an scf.parallel (its body
// does not loop); iv = r * step + lb. The
// bounds are constant: the range is [0, ceil((100000 - 4) / 3)) = [0, 33332)
// with no arithmetic left at the call, and the function gets no trip count.
// (Constants are matched by the names the printer gives them, %c<value>:
// folding leaves a constant per folded step, all but the last unused until
// the next canonicalization.)
// CHECK-LABEL: func.func @one_d(
// CHECK-SAME: %[[A:[^:]*]]: memref<?xf32>, %[[B:[^:]*]]: memref<?xf32>)
// CHECK-NOT: arith.subi
// CHECK-NOT: arith.ceildivsi
// CHECK-NOT: arith.maxsi
// CHECK-NOT: arith.muli
// CHECK: call @one_d__parallel_0(%c0{{(_[0-9]+)?}}, %c33332{{(_[0-9]+)?}}, %[[A]], %[[B]]) : (index, index, memref<?xf32>, memref<?xf32>) -> ()
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @one_d__parallel_0(
// CHECK-SAME: %[[LO:[^:]*]]: index, %[[HI:[^:]*]]: index, %[[PA:[^:]*]]: memref<?xf32>, %[[PB:[^:]*]]: memref<?xf32>)
// CHECK-SAME: grove.parallel_body = 1 : i64} {
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[PLB:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[PSTEP:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[PONE:.*]] = arith.constant 1 : index
// CHECK: scf.parallel (%[[R:.*]]) = (%[[LO]]) to (%[[HI]]) step (%[[PONE]]) {
// CHECK-NEXT: %[[SCALED:.*]] = arith.muli %[[R]], %[[PSTEP]] : index
// CHECK-NEXT: %[[I:.*]] = arith.addi %[[SCALED]], %[[PLB]] : index
// CHECK-NEXT: %[[V:.*]] = memref.load %[[PA]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: %[[W:.*]] = arith.mulf %[[V]], %[[TWO]] : f32
// CHECK-NEXT: memref.store %[[W]], %[[PB]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @one_d(%a: memref<?xf32>, %b: memref<?xf32>) {
  %c4 = arith.constant 4 : index
  %c3 = arith.constant 3 : index
  %c100000 = arith.constant 100000 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c4) to (%c100000) step (%c3) {
    %v = memref.load %a[%i] : memref<?xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %b[%i] : memref<?xf32>
  }
  return
}

// 4-D, 8 x 16 x 32 outer iterations: dimensions 0-2 are delinearized from
// the range index (the last fastest), dimension 3 stays an scf.parallel with
// its own bounds. One linear iteration is the 64 of dimension 3. A value
// computed before the loop (%x) is passed; the constants, including the
// bounds and steps, are cloned. The trip counts are constant (8, 16, 32:
// 4096 in all), so the function divides by constants and gets none of
// them.
// CHECK-LABEL: func.func @four_d(
// CHECK-SAME: %[[A:[^:]*]]: memref<?x?x?x?xf32>, %[[B:[^:]*]]: memref<?x?x?x?xf32>, %[[S:[^:]*]]: f32)
// CHECK: %[[X:.*]] = arith.mulf %[[S]], %[[S]] : f32
// CHECK-NOT: scf.parallel
// CHECK-NOT: arith.subi
// CHECK-NOT: arith.ceildivsi
// CHECK-NOT: arith.maxsi
// CHECK-NOT: arith.muli
// CHECK: call @four_d__parallel_0(%c0{{(_[0-9]+)?}}, %c4096{{(_[0-9]+)?}}, %[[A]], %[[X]], %[[B]]) : (index, index, memref<?x?x?x?xf32>, f32, memref<?x?x?x?xf32>) -> ()
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @four_d__parallel_0(
// CHECK-SAME: %[[LO:[^:]*]]: index, %[[HI:[^:]*]]: index, %[[PA:[^:]*]]: memref<?x?x?x?xf32>, %[[PX:[^:]*]]: f32, %[[PB:[^:]*]]: memref<?x?x?x?xf32>)
// CHECK-SAME: grove.parallel_body = 64 : i64} {
// CHECK-DAG: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[PLB0:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[PLB1:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[PLB2:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[PLB3:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[PST0:.*]] = arith.constant 6 : index
// CHECK-DAG: %[[PST1:.*]] = arith.constant 7 : index
// CHECK-DAG: %[[PST2:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[PST3:.*]] = arith.constant 9 : index
// CHECK-DAG: %[[PUB3:.*]] = arith.constant 581 : index
// CHECK-DAG: %[[PN1:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[PN2:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[PONE:.*]] = arith.constant 1 : index
// CHECK: scf.for %[[R:.*]] = %[[LO]] to %[[HI]] step %[[PONE]] {
// CHECK-NEXT: %[[IDX2:.*]] = arith.remui %[[R]], %[[PN2]] : index
// CHECK-NEXT: %[[REST2:.*]] = arith.divui %[[R]], %[[PN2]] : index
// CHECK-NEXT: %[[M2:.*]] = arith.muli %[[IDX2]], %[[PST2]] : index
// CHECK-NEXT: %[[K:.*]] = arith.addi %[[M2]], %[[PLB2]] : index
// CHECK-NEXT: %[[IDX1:.*]] = arith.remui %[[REST2]], %[[PN1]] : index
// CHECK-NEXT: %[[REST1:.*]] = arith.divui %[[REST2]], %[[PN1]] : index
// CHECK-NEXT: %[[M1:.*]] = arith.muli %[[IDX1]], %[[PST1]] : index
// CHECK-NEXT: %[[J:.*]] = arith.addi %[[M1]], %[[PLB1]] : index
// CHECK-NEXT: %[[M0:.*]] = arith.muli %[[REST1]], %[[PST0]] : index
// CHECK-NEXT: %[[I:.*]] = arith.addi %[[M0]], %[[PLB0]] : index
// CHECK-NEXT: scf.parallel (%[[L:.*]]) = (%[[PLB3]]) to (%[[PUB3]]) step (%[[PST3]]) {
// CHECK-NEXT: %[[V:.*]] = memref.load %[[PA]][%[[I]], %[[J]], %[[K]], %[[L]]] : memref<?x?x?x?xf32>
// CHECK-NEXT: %[[W:.*]] = arith.mulf %[[V]], %[[PX]] : f32
// CHECK-NEXT: %[[Y:.*]] = arith.addf %[[W]], %[[HALF]] : f32
// CHECK-NEXT: memref.store %[[Y]], %[[PB]][%[[I]], %[[J]], %[[K]], %[[L]]] : memref<?x?x?x?xf32>
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @four_d(%a: memref<?x?x?x?xf32>, %b: memref<?x?x?x?xf32>, %s: f32) {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c9 = arith.constant 9 : index
  %c50 = arith.constant 50 : index
  %c115 = arith.constant 115 : index
  %c260 = arith.constant 260 : index
  %c581 = arith.constant 581 : index
  %half = arith.constant 0.5 : f32
  %x = arith.mulf %s, %s : f32
  scf.parallel (%i, %j, %k, %l) = (%c2, %c3, %c4, %c5) to (%c50, %c115, %c260, %c581) step (%c6, %c7, %c8, %c9) {
    %v = memref.load %a[%i, %j, %k, %l] : memref<?x?x?x?xf32>
    %w = arith.mulf %v, %x : f32
    %y = arith.addf %w, %half : f32
    memref.store %y, %b[%i, %j, %k, %l] : memref<?x?x?x?xf32>
  }
  return
}

// The min-work threshold counts every iteration of the loop and of the loops
// nested in it: 32767 iterations stay a loop, 32768 are outlined, and so are
// 128 x 256 iterations of which the 256 are an scf.for in the body (work 256
// per iteration). With min-work=100, 99 iterations stay and 100 go.
// CHECK-LABEL: func.func @threshold(
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c32767) step (%c1) {
// CHECK: call @threshold__parallel_0(
// CHECK: call @threshold__parallel_1(
// CHECK-NOT: scf.parallel
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c99) step (%c1) {
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c100) step (%c1) {
// CHECK: return
// CHECK-DAG: func.func private @threshold__parallel_0({{.*}}) {{.*}}grove.parallel_body = 1 : i64}
// CHECK-DAG: func.func private @threshold__parallel_1({{.*}}) {{.*}}grove.parallel_body = 256 : i64}
// MIN100-LABEL: func.func @threshold(
// MIN100: call @threshold__parallel_0(
// MIN100: call @threshold__parallel_1(
// MIN100: call @threshold__parallel_2(
// MIN100: scf.parallel (%{{.*}}) = (%c0) to (%c99) step (%c1) {
// MIN100: call @threshold__parallel_3(
// MIN100: return
func.func @threshold(%a: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c99 = arith.constant 99 : index
  %c100 = arith.constant 100 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c32767 = arith.constant 32767 : index
  %c32768 = arith.constant 32768 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c32767) step (%c1) {
    memref.store %zero, %a[%i] : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%c32768) step (%c1) {
    memref.store %zero, %a[%i] : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%c128) step (%c1) {
    scf.for %j = %c0 to %c256 step %c1 {
      memref.store %zero, %a[%j] : memref<?xf32>
    }
  }
  scf.parallel (%i) = (%c0) to (%c99) step (%c1) {
    memref.store %zero, %a[%i] : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%c100) step (%c1) {
    memref.store %zero, %a[%i] : memref<?xf32>
  }
  return
}

// A loop with results (a reduction) is left alone, and so is a loop without
// results nested in it: only outermost loops are candidates.
// CHECK-LABEL: func.func @reduction(
// CHECK: %{{.*}} = scf.parallel (%{{.*}}) = (%c0) to (%c100000) step (%c1) init (%{{.*}}) -> f32 {
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c100000) step (%c1) {
// CHECK-NOT: call
// CHECK: return
// MIN100-LABEL: func.func @reduction(
// MIN100-NOT: call
// MIN100: return
func.func @reduction(%a: memref<?xf32>, %b: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c100000 = arith.constant 100000 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.parallel (%i) = (%c0) to (%c100000) step (%c1) init (%zero) -> f32 {
    %v = memref.load %a[%i] : memref<?xf32>
    scf.parallel (%j) = (%c0) to (%c100000) step (%c1) {
      memref.store %v, %b[%j] : memref<?xf32>
    }
    scf.reduce(%v : f32) {
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %y : f32
      scf.reduce.return %s : f32
    }
  }
  return %r : f32
}

// An scf.parallel nested in an outlined one is cloned into the function as
// it is, not outlined separately; the work of an iteration includes it.
// CHECK-LABEL: func.func @nested(
// CHECK-NOT: scf.parallel
// CHECK: call @nested__parallel_0(
// CHECK-NOT: scf.parallel
// CHECK: return
// CHECK-NOT: @nested__parallel_1
// CHECK-LABEL: func.func private @nested__parallel_0(
// CHECK-SAME: grove.parallel_body = 1000 : i64}
// CHECK: scf.for
// CHECK: scf.parallel (%{{.*}}) = (%c0{{.*}}) to (%c1000{{.*}}) step (%c1{{.*}}) {
// CHECK: memref.store
// CHECK-NOT: @nested__parallel_1
func.func @nested(%a: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1000 = arith.constant 1000 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%c1000) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c1000) step (%c1) {
      memref.store %two, %a[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

// Outer dimensions with fewer than 8 iterations in all (2 x 3) are
// linearized together with the innermost one: no inner scf.parallel (the
// range loop itself is one), and one linear iteration is one iteration of
// the body. The range is [0, 2 * 3 * 100000); the body divides by the
// constants 100000 and 3 (unit steps and zero lower bounds fold away).
// CHECK-LABEL: func.func @few_outer(
// CHECK: call @few_outer__parallel_0(%c0{{(_[0-9]+)?}}, %c600000{{(_[0-9]+)?}}, %{{[^,)]*}}) : (index, index, memref<?x?x?xf32>) -> ()
// CHECK-LABEL: func.func private @few_outer__parallel_0(
// CHECK-SAME: %{{[^:]*}}: index, %{{[^:]*}}: index, %[[PA:[^:]*]]: memref<?x?x?xf32>)
// CHECK-SAME: grove.parallel_body = 1 : i64}
// CHECK-DAG: %[[PN1:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[PN2:.*]] = arith.constant 100000 : index
// CHECK: scf.parallel (%[[R:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT: %[[K:.*]] = arith.remui %[[R]], %[[PN2]] : index
// CHECK-NEXT: %[[REST2:.*]] = arith.divui %[[R]], %[[PN2]] : index
// CHECK-NEXT: %[[J:.*]] = arith.remui %[[REST2]], %[[PN1]] : index
// CHECK-NEXT: %[[I:.*]] = arith.divui %[[REST2]], %[[PN1]] : index
// CHECK-NEXT: memref.store %{{.*}}, %[[PA]][%[[I]], %[[J]], %[[K]]] : memref<?x?x?xf32>
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @few_outer(%a: memref<?x?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c100000 = arith.constant 100000 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c2, %c3, %c100000) step (%c1, %c1, %c1) {
    memref.store %two, %a[%i, %j, %k] : memref<?x?x?xf32>
  }
  return
}

// With 8 outer iterations the last dimension stays a loop (work 4096 per
// linear iteration); with 4 they are all linearized (work 1).
// CHECK-LABEL: func.func private @eight_outer__parallel_0(
// CHECK-SAME: grove.parallel_body = 4096 : i64}
// CHECK: scf.for
// CHECK: scf.parallel
// CHECK: return
// CHECK-LABEL: func.func private @four_outer__parallel_0(
// CHECK-SAME: grove.parallel_body = 1 : i64}
// CHECK-NOT: scf.for
// CHECK: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @eight_outer(%a: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c4096 = arith.constant 4096 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c4096) step (%c1, %c1) {
    memref.store %two, %a[%i, %j] : memref<?x?xf32>
  }
  return
}
func.func @four_outer(%a: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8192 = arith.constant 8192 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8192) step (%c1, %c1) {
    memref.store %two, %a[%i, %j] : memref<?x?xf32>
  }
  return
}

// Dynamic bounds: the loop is outlined whatever its size. A nested loop of
// unknown trip count makes the work unknown (0). In the second loop the
// nested scf.for makes both dimensions linear, [0, max(%n, 0) * 1024), the
// body dividing by the constant 1024; the work of a linear iteration is
// known although the outer size is not (the 3 of the nested scf.for). The
// trip counts come from the bounds at run time, folded as far as they go:
// from 0 by 1 to %n is max(%n, 0) iterations. The outermost count is only
// the range's end, never passed.
// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME: %[[A:[^:]*]]: memref<?x?xf32>, %[[N:[^:]*]]: index, %[[M:[^:]*]]: index)
// CHECK-NOT: arith.subi
// CHECK-NOT: arith.ceildivsi
// CHECK: %[[CNT:.*]] = arith.maxsi %[[N]], %[[Z:c0(_[0-9]+)?]] : index
// CHECK-NEXT: call @dynamic__parallel_0(%[[Z]], %[[CNT]], %[[A]], %[[M]]) : (index, index, memref<?x?xf32>, index) -> ()
// CHECK-NOT: arith.subi
// CHECK-NOT: arith.ceildivsi
// CHECK: %[[CNT1:.*]] = arith.maxsi %[[N]], %[[Z1:c0(_[0-9]+)?]] : index
// CHECK: %[[TOTAL1:.*]] = arith.muli %[[CNT1]], %c1024{{(_[0-9]+)?}} : index
// CHECK-NEXT: call @dynamic__parallel_1(%[[Z1]], %[[TOTAL1]], %[[A]]) : (index, index, memref<?x?xf32>) -> ()
// CHECK: return
// CHECK-LABEL: func.func private @dynamic__parallel_1(
// CHECK-SAME: grove.parallel_body = 3 : i64}
// CHECK-NOT: scf.parallel
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: arith.remui %[[R]], %c1024 : index
// CHECK-NEXT: arith.divui %[[R]], %c1024 : index
// CHECK-NOT: scf.parallel
// CHECK: return
// The nested loop's bound %m is passed.
// CHECK-LABEL: func.func private @dynamic__parallel_0(
// CHECK-SAME: %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: memref<?x?xf32>, %[[PM:[^:]*]]: index)
// CHECK-SAME: grove.parallel_body = 0 : i64}
// CHECK: scf.for
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[PM]] step
func.func @dynamic(%a: memref<?x?xf32>, %n: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c1024 = arith.constant 1024 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %m step %c1 {
      memref.store %two, %a[%i, %j] : memref<?x?xf32>
    }
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c1024) step (%c1, %c1) {
    scf.for %t = %c0 to %c3 step %c1 {
      memref.store %two, %a[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

// A loop inside a sequential loop: the call stays where the loop was, inside
// the scf.for, and passes its induction variable.
// CHECK-LABEL: func.func @in_for(
// CHECK: scf.for %[[T:[^ ]*]] =
// CHECK-NOT: scf.parallel
// CHECK: call @in_for__parallel_0(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %[[T]]) : (index, index, memref<?x?xf32>, index) -> ()
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @in_for(%a: memref<?x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant 2.0 : f32
  scf.for %t = %c0 to %c4 step %c1 {
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      memref.store %two, %a[%t, %i] : memref<?x?xf32>
    }
  }
  return
}

// A dynamic middle dimension: its trip count, max(ceil((%m - 1) / 2), 0),
// is computed at the call and passed, since the body divides the range
// index by it; the outermost one's, max(%n, 0), only enters the range's end.
// CHECK-LABEL: func.func @dynamic_middle(
// CHECK-SAME: %[[A:[^:]*]]: memref<?x?x?xf32>, %[[N:[^:]*]]: index, %[[M:[^:]*]]: index)
// CHECK: %[[N0:.*]] = arith.maxsi %[[N]], %[[Z:c0(_[0-9]+)?]] : index
// CHECK-NEXT: %[[D1:.*]] = arith.subi %[[M]], %c1 : index
// CHECK-NEXT: %[[Q1:.*]] = arith.ceildivsi %[[D1]], %c2 : index
// CHECK-NEXT: %[[N1:.*]] = arith.maxsi %[[Q1]], %[[Z]] : index
// CHECK-NEXT: %[[TOTAL:.*]] = arith.muli %[[N0]], %[[N1]] : index
// CHECK-NEXT: call @dynamic_middle__parallel_0(%[[Z]], %[[TOTAL]], %[[A]], %[[N1]]) : (index, index, memref<?x?x?xf32>, index) -> ()
// CHECK-LABEL: func.func private @dynamic_middle__parallel_0(
// CHECK-SAME: %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: memref<?x?x?xf32>, %[[PN1:[^:]*]]: index)
// CHECK-SAME: grove.parallel_body = 1024 : i64}
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: arith.remui %[[R]], %[[PN1]] : index
// CHECK-NEXT: arith.divui %[[R]], %[[PN1]] : index
func.func @dynamic_middle(%a: memref<?x?x?xf32>, %n: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c1024 = arith.constant 1024 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i, %j, %k) = (%c0, %c1, %c0) to (%n, %m, %c1024) step (%c1, %c2, %c1) {
    memref.store %two, %a[%i, %j, %k] : memref<?x?x?xf32>
  }
  return
}

// Work known to be 0 per iteration, however many iterations there are: the
// innermost dimension, the one that stays a loop, is empty (from 5 to 5).
// Nothing is outlined, with any min-work.
// CHECK-LABEL: func.func @no_work(
// CHECK-NOT: call
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c5) to (%{{.*}}, %c5) step (%c1, %c1) {
// CHECK-NOT: call
// CHECK: return
// CHECK-NOT: @no_work__parallel
// MIN100-LABEL: func.func @no_work(
// MIN100-NOT: call
// MIN100: return
// MIN100-NOT: @no_work__parallel
func.func @no_work(%a: memref<?x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i, %j) = (%c0, %c5) to (%n, %c5) step (%c1, %c1) {
    memref.store %two, %a[%i, %j] : memref<?x?xf32>
  }
  return
}

// A nested loop with a constant trip count of 0 (an scf.for from 0 to 0 or
// from 5 to 0, an scf.parallel from 0 to 0) adds no work but does not
// cancel its siblings' either; it counts as 1:
// * 100000 iterations of a store next to an empty scf.for: work 1, outlined;
// * 128 iterations of an empty scf.for next to one of 256: work 256, 32768
//   in all, outlined; 127 of them (32512) stay a loop, outlined only with
//   min-work=100;
// * 1000 iterations of an empty scf.parallel next to an scf.for of 64:
//   work 64, outlined;
// * a dynamic number of iterations of an empty scf.for alone: work 1, and
//   outlined like any loop of unknown size.
// CHECK-LABEL: func.func @zero_sibling(
// CHECK-SAME: %[[A:[^:]*]]: memref<?xf32>, %[[B:[^:]*]]: memref<?xf32>, %[[N:[^:]*]]: index)
// CHECK-NOT: scf.parallel
// CHECK: call @zero_sibling__parallel_0(%c0{{(_[0-9]+)?}}, %c100000{{(_[0-9]+)?}}, %[[A]], %[[B]])
// CHECK-NOT: scf.parallel
// CHECK: call @zero_sibling__parallel_1(%c0{{(_[0-9]+)?}}, %c128{{(_[0-9]+)?}}, %[[B]], %[[A]])
// CHECK-NOT: call
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c127) step (%c1) {
// CHECK-NOT: call
// CHECK: scf.reduce
// CHECK-NOT: scf.parallel
// CHECK: call @zero_sibling__parallel_2(%c0{{(_[0-9]+)?}}, %c1000{{(_[0-9]+)?}}, %[[B]], %[[A]])
// CHECK-NOT: scf.parallel
// CHECK: call @zero_sibling__parallel_3(%c0{{(_[0-9]+)?}}, %{{.*}}, %[[A]])
// CHECK-NEXT: return
// CHECK-NOT: @zero_sibling__parallel_4
// CHECK-DAG: func.func private @zero_sibling__parallel_0({{.*}}) {{.*}}grove.parallel_body = 1 : i64}
// CHECK-DAG: func.func private @zero_sibling__parallel_1({{.*}}) {{.*}}grove.parallel_body = 256 : i64}
// CHECK-DAG: func.func private @zero_sibling__parallel_2({{.*}}) {{.*}}grove.parallel_body = 64 : i64}
// CHECK-DAG: func.func private @zero_sibling__parallel_3({{.*}}) {{.*}}grove.parallel_body = 1 : i64}
// MIN100-LABEL: func.func @zero_sibling(
// MIN100-NOT: scf.parallel
// MIN100: call @zero_sibling__parallel_2(%c0{{(_[0-9]+)?}}, %c127{{(_[0-9]+)?}},
// MIN100-NOT: scf.parallel
// MIN100: call @zero_sibling__parallel_4(
// MIN100-NEXT: return
// MIN100-DAG: func.func private @zero_sibling__parallel_2({{.*}}) {{.*}}grove.parallel_body = 256 : i64}
func.func @zero_sibling(%a: memref<?xf32>, %b: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c64 = arith.constant 64 : index
  %c127 = arith.constant 127 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c1000 = arith.constant 1000 : index
  %c100000 = arith.constant 100000 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%c100000) step (%c1) {
    memref.store %two, %a[%i] : memref<?xf32>
    scf.for %j = %c0 to %c0 step %c1 {
      memref.store %two, %b[%j] : memref<?xf32>
    }
  }
  scf.parallel (%i) = (%c0) to (%c128) step (%c1) {
    scf.for %j = %c5 to %c0 step %c1 {
      memref.store %two, %b[%j] : memref<?xf32>
    }
    scf.for %k = %c0 to %c256 step %c1 {
      memref.store %two, %a[%k] : memref<?xf32>
    }
  }
  scf.parallel (%i) = (%c0) to (%c127) step (%c1) {
    scf.for %j = %c5 to %c0 step %c1 {
      memref.store %two, %b[%j] : memref<?xf32>
    }
    scf.for %k = %c0 to %c256 step %c1 {
      memref.store %two, %a[%k] : memref<?xf32>
    }
  }
  scf.parallel (%i) = (%c0) to (%c1000) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c0) step (%c1) {
      memref.store %two, %b[%j] : memref<?xf32>
    }
    scf.for %k = %c0 to %c64 step %c1 {
      memref.store %two, %a[%k] : memref<?xf32>
    }
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c5 to %c0 step %c1 {
      memref.store %two, %a[%i] : memref<?xf32>
    }
  }
  return
}

// A work of one iteration that overflows saturates at the largest i64.
// (2^40 x 2^40 iterations of two nested loops.)
// CHECK-LABEL: func.func private @huge__parallel_0(
// CHECK-SAME: grove.parallel_body = 9223372036854775807 : i64}
func.func @huge(%a: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %big = arith.constant 1099511627776 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    scf.for %t = %c0 to %big step %c1 {
      scf.for %u = %c0 to %big step %c1 {
        memref.store %two, %a[%i, %t] : memref<?x?xf32>
      }
    }
  }
  return
}

// Two loops in one function are numbered in order; a name already taken
// gets a fresh one, and the call uses it.
// CHECK-LABEL: func.func private @clash__parallel_0()
// CHECK-LABEL: func.func @clash(
// CHECK: call @[[FIRST:clash__parallel_0_[0-9]+]](
// CHECK: call @clash__parallel_1(
// CHECK-DAG: func.func private @clash__parallel_1(
// CHECK-DAG: func.func private @[[FIRST]](
func.func private @clash__parallel_0()
func.func @clash(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %two, %a[%i] : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %two, %a[%i] : memref<?xf32>
  }
  return
}

// Functions already marked as parallel bodies are not looked into, so a
// second run outlines nothing more.
// CHECK-LABEL: func.func private @marked(
// CHECK: scf.parallel
// TWICE-NOT: __parallel_{{[0-9_]+}}__parallel
// TWICE-LABEL: func.func private @marked(
// TWICE: scf.parallel
// TWICE-NOT: @marked__parallel
func.func private @marked(%a: memref<?xf32>, %n: index) attributes {grove.parallel_body = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %two, %a[%i] : memref<?xf32>
  }
  return
}

// DEFINE: %{lower} = --scf-parallel-for-to-nested-fors --convert-scf-to-cf --expand-strided-metadata --lower-affine --arith-expand --finalize-memref-to-llvm --convert-to-llvm --reconcile-unrealized-casts
// RUN: grove-opt %s %{lower} -o %t.ref.mlir
// RUN: grove-opt %s --grove-outline-parallel-loops=min-work=0 %{lower} -o %t.seq.mlir
// RUN: grove-opt %s --grove-outline-parallel-loops=min-work=0 %{lower} --grove-dispatch-parallel-calls -o %t.par.mlir
// RUN: grove-opt %s --grove-outline-parallel-loops=min-work=0 --grove-host-loop-hints %{lower} --grove-host-loop-metadata --grove-dispatch-parallel-calls -o %t.hints.mlir
// RUN: grove-opt %t.seq.mlir | FileCheck %s --check-prefix=SEQ
// RUN: grove-opt %t.par.mlir | FileCheck %s --check-prefix=PAR
// RUN: grove-opt %t.par.mlir | FileCheck %s --check-prefix=PARCOUNT
// RUN: grove-opt %t.hints.mlir | FileCheck %s --check-prefix=HINTS
// RUN: grove-opt %t.hints.mlir | FileCheck %s --check-prefix=PARCOUNT
// RUN: grove-opt %s --grove-outline-parallel-loops=min-work=0 --grove-host-loop-hints | FileCheck %s --check-prefix=PROMOTED

// RUN: mlir-runner %t.ref.mlir -e t1d -entry-point-result=i64 | FileCheck %s --check-prefix=T1D
// RUN: mlir-runner %t.seq.mlir -e t1d -entry-point-result=i64 | FileCheck %s --check-prefix=T1D
// RUN: mlir-runner %t.par.mlir -e t1d -entry-point-result=i64 | FileCheck %s --check-prefix=T1D
// RUN: mlir-runner -O3 %t.hints.mlir -e t1d -entry-point-result=i64 | FileCheck %s --check-prefix=T1D
// RUN: mlir-runner %t.ref.mlir -e t4d -entry-point-result=i64 | FileCheck %s --check-prefix=T4D
// RUN: mlir-runner %t.seq.mlir -e t4d -entry-point-result=i64 | FileCheck %s --check-prefix=T4D
// RUN: mlir-runner %t.par.mlir -e t4d -entry-point-result=i64 | FileCheck %s --check-prefix=T4D
// RUN: mlir-runner -O3 %t.hints.mlir -e t4d -entry-point-result=i64 | FileCheck %s --check-prefix=T4D
// RUN: mlir-runner %t.ref.mlir -e tfew -entry-point-result=i64 | FileCheck %s --check-prefix=TFEW
// RUN: mlir-runner %t.seq.mlir -e tfew -entry-point-result=i64 | FileCheck %s --check-prefix=TFEW
// RUN: mlir-runner %t.par.mlir -e tfew -entry-point-result=i64 | FileCheck %s --check-prefix=TFEW
// RUN: mlir-runner -O3 %t.hints.mlir -e tfew -entry-point-result=i64 | FileCheck %s --check-prefix=TFEW
// RUN: mlir-runner %t.ref.mlir -e tdyn -entry-point-result=i64 | FileCheck %s --check-prefix=TDYN
// RUN: mlir-runner %t.seq.mlir -e tdyn -entry-point-result=i64 | FileCheck %s --check-prefix=TDYN
// RUN: mlir-runner %t.par.mlir -e tdyn -entry-point-result=i64 | FileCheck %s --check-prefix=TDYN
// RUN: mlir-runner -O3 %t.hints.mlir -e tdyn -entry-point-result=i64 | FileCheck %s --check-prefix=TDYN
// RUN: mlir-runner %t.ref.mlir -e tnest -entry-point-result=i64 | FileCheck %s --check-prefix=TNEST
// RUN: mlir-runner %t.seq.mlir -e tnest -entry-point-result=i64 | FileCheck %s --check-prefix=TNEST
// RUN: mlir-runner %t.par.mlir -e tnest -entry-point-result=i64 | FileCheck %s --check-prefix=TNEST
// RUN: mlir-runner -O3 %t.hints.mlir -e tnest -entry-point-result=i64 | FileCheck %s --check-prefix=TNEST
// RUN: mlir-runner %t.ref.mlir -e tzero -entry-point-result=i64 | FileCheck %s --check-prefix=TZERO
// RUN: mlir-runner %t.seq.mlir -e tzero -entry-point-result=i64 | FileCheck %s --check-prefix=TZERO
// RUN: mlir-runner %t.par.mlir -e tzero -entry-point-result=i64 | FileCheck %s --check-prefix=TZERO
// RUN: mlir-runner -O3 %t.hints.mlir -e tzero -entry-point-result=i64 | FileCheck %s --check-prefix=TZERO
// RUN: mlir-runner %t.ref.mlir -e tmix -entry-point-result=i64 | FileCheck %s --check-prefix=TMIX
// RUN: mlir-runner %t.seq.mlir -e tmix -entry-point-result=i64 | FileCheck %s --check-prefix=TMIX
// RUN: mlir-runner %t.par.mlir -e tmix -entry-point-result=i64 | FileCheck %s --check-prefix=TMIX
// RUN: mlir-runner -O3 %t.hints.mlir -e tmix -entry-point-result=i64 | FileCheck %s --check-prefix=TMIX

// grove-outline-parallel-loops (OutlineParallelLoops.cpp) and
// grove-dispatch-parallel-calls (DispatchParallelCalls.cpp) keep what the
// loops compute. Each entry point runs one kernel on a zeroed buffer and
// returns a weighted checksum, sum over e of A[e] * (e + 1), with A as a
// flat buffer: an iteration skipped, run twice or given the wrong induction
// variables changes it. Three builds must agree: the loops as written (ref),
// outlined and called once over the whole range (seq), and dispatched to the
// grove_rt_parallel_for defined at the end of this file (par), which calls
// the thunk on chunks of two linear iterations, last chunk first, the way a
// thread team splits the range in any order. min-work=0 outlines even these
// small loops. A fourth build (hints) adds grove-host-loop-hints and
// grove-host-loop-metadata as the host pipeline runs them (in tdyn the
// nested loop's load / store of a[i, j, k] becomes an iter_arg), and is
// compiled at -O3 so that LLVM's vectorizer acts on the parallel-access
// metadata.
// The expected values were computed with a Python model of the loop nests.

// The outlining and dispatch did happen.
// SEQ: llvm.func @t1d_kernel__parallel_0(
// SEQ-NOT: llvm.call @grove_rt_parallel_for
// PAR-DAG: llvm.func internal @t1d_kernel__parallel_0__thunk(
// PAR-DAG: llvm.func internal @t4d_kernel__parallel_0__thunk(
// PAR-DAG: llvm.func internal @tfew_kernel__parallel_0__thunk(
// PAR-DAG: llvm.func internal @tdyn_kernel__parallel_0__thunk(
// PAR-DAG: llvm.func internal @tnest_kernel__parallel_0__thunk(
// PAR-DAG: llvm.func internal @tzero_kernel__parallel_0__thunk(
// PAR-DAG: llvm.func internal @tmix_kernel__parallel_0__thunk(
// PARCOUNT-COUNT-7: llvm.call @grove_rt_parallel_for(
// PARCOUNT-NOT: llvm.call @grove_rt_parallel_for(
// The hints build dispatches the same calls (PARCOUNT) and tdyn's
// accumulator became an iter_arg. The innermost scf.parallel left in the
// tnest range function (32 iterations, at least min-trip-count) became an
// annotated loop whose load and store are in its access group, unroll
// disabled; the one left in the t4d range function has only 4 iterations,
// below min-trip-count (16): it became a plain loop with no annotation and
// no access group, left to LLVM's full unroller.
// PROMOTED-LABEL: func.func private @tdyn_kernel__parallel_0(
// PROMOTED: scf.for {{.*}} iter_args
// HINTS-DAG: #[[$UNROLL:loop_unroll[0-9]*]] = #llvm.loop_unroll<disable = true>
// HINTS-DAG: #[[$PANN:loop_annotation[0-9]*]] = #llvm.loop_annotation<unroll = #[[$UNROLL]], parallelAccesses = #[[$G:access_group[0-9]*]]>
// HINTS-LABEL: llvm.func @t4d_kernel__parallel_0(
// HINTS-NOT: access_groups
// HINTS-NOT: loop_annotation
// HINTS-LABEL: llvm.func internal @t4d_kernel__parallel_0__thunk(
// HINTS-LABEL: llvm.func @tnest_kernel__parallel_0(
// HINTS: llvm.load %{{.*}} {access_groups = [#[[$G]]]}
// HINTS: llvm.store %{{.*}}, %{{.*}} {access_groups = [#[[$G]]]}
// HINTS: llvm.br ^{{.*}} {loop_annotation = #[[$PANN]]}
// HINTS-LABEL: llvm.func internal @tnest_kernel__parallel_0__thunk(

// T1D: {{^}}48477858{{$}}
// T4D: {{^}}495244044{{$}}
// TFEW: {{^}}5732765092032{{$}}
// TDYN: {{^}}2912786677{{$}}
// TNEST: {{^}}5167468800{{$}}
// TZERO: {{^}}127908{{$}}
// TMIX: {{^}}27748464{{$}}

func.func private @checksum(%a: memref<?xi64>) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i64
  %n = memref.dim %a, %c0 : memref<?xi64>
  %s = scf.for %e = %c0 to %n step %c1 iter_args(%acc = %zero) -> i64 {
    %v = memref.load %a[%e] : memref<?xi64>
    %e1 = arith.addi %e, %c1 : index
    %w = arith.index_cast %e1 : index to i64
    %p = arith.muli %v, %w : i64
    %next = arith.addi %acc, %p : i64
    scf.yield %next : i64
  }
  return %s : i64
}

func.func private @zeroed(%n: index) -> memref<?xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i64
  %buf = memref.alloc(%n) : memref<?xi64>
  scf.for %e = %c0 to %n step %c1 {
    memref.store %zero, %buf[%e] : memref<?xi64>
  }
  return %buf : memref<?xi64>
}

// 1-D, lower bound 3, step 7: the whole loop is the linear range.
// a[i] += i + 10 for i in range(3, 1000, 7).
func.func @t1d_kernel(%a: memref<1000xi64>) {
  %c3 = arith.constant 3 : index
  %c7 = arith.constant 7 : index
  %c1000 = arith.constant 1000 : index
  %c10 = arith.constant 10 : i64
  scf.parallel (%i) = (%c3) to (%c1000) step (%c7) {
    %v = memref.load %a[%i] : memref<1000xi64>
    %ii = arith.index_cast %i : index to i64
    %s0 = arith.addi %v, %ii : i64
    %s1 = arith.addi %s0, %c10 : i64
    memref.store %s1, %a[%i] : memref<1000xi64>
  }
  return
}

func.func @t1d() -> i64 {
  %n = arith.constant 1000 : index
  %buf = func.call @zeroed(%n) : (index) -> memref<?xi64>
  %a = memref.cast %buf : memref<?xi64> to memref<1000xi64>
  func.call @t1d_kernel(%a) : (memref<1000xi64>) -> ()
  %r = func.call @checksum(%buf) : (memref<?xi64>) -> i64
  memref.dealloc %buf : memref<?xi64>
  return %r : i64
}

// 4-D with 3 * 3 * 3 outer iterations: three dimensions delinearized, the
// last one an inner loop. a[i, j, k, l] += 1000 i + 100 j + 10 k + l + 10
// over range(1, 6, 2) x range(0, 7, 3) x range(2, 5) x range(1, 9, 2).
func.func @t4d_kernel(%a: memref<6x7x5x9xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c9 = arith.constant 9 : index
  %c1000 = arith.constant 1000 : i64
  %c100 = arith.constant 100 : i64
  %c10 = arith.constant 10 : i64
  scf.parallel (%i, %j, %k, %l) = (%c1, %c0, %c2, %c1) to (%c6, %c7, %c5, %c9) step (%c2, %c3, %c1, %c2) {
    %v = memref.load %a[%i, %j, %k, %l] : memref<6x7x5x9xi64>
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %kk = arith.index_cast %k : index to i64
    %ll = arith.index_cast %l : index to i64
    %t0 = arith.muli %ii, %c1000 : i64
    %t1 = arith.muli %jj, %c100 : i64
    %t2 = arith.muli %kk, %c10 : i64
    %s0 = arith.addi %t0, %t1 : i64
    %s1 = arith.addi %s0, %t2 : i64
    %s2 = arith.addi %s1, %ll : i64
    %s3 = arith.addi %s2, %v : i64
    %s4 = arith.addi %s3, %c10 : i64
    memref.store %s4, %a[%i, %j, %k, %l] : memref<6x7x5x9xi64>
  }
  return
}

func.func @t4d() -> i64 {
  %n = arith.constant 1890 : index
  %buf = func.call @zeroed(%n) : (index) -> memref<?xi64>
  %a = memref.reinterpret_cast %buf to offset: [0], sizes: [6, 7, 5, 9], strides: [315, 45, 9, 1] : memref<?xi64> to memref<6x7x5x9xi64>
  func.call @t4d_kernel(%a) : (memref<6x7x5x9xi64>) -> ()
  %r = func.call @checksum(%buf) : (memref<?xi64>) -> i64
  memref.dealloc %buf : memref<?xi64>
  return %r : i64
}

// 3-D with 2 * 3 < 8 outer iterations: all three dimensions are linearized.
// a[i, j, k] += 1000000 i + 10000 j + k + 10 over range(1, 5, 2) x
// range(0, 3) x range(5, 400, 3).
func.func @tfew_kernel(%a: memref<5x3x400xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c400 = arith.constant 400 : index
  %m0 = arith.constant 1000000 : i64
  %m1 = arith.constant 10000 : i64
  %c10 = arith.constant 10 : i64
  scf.parallel (%i, %j, %k) = (%c1, %c0, %c5) to (%c5, %c3, %c400) step (%c2, %c1, %c3) {
    %v = memref.load %a[%i, %j, %k] : memref<5x3x400xi64>
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %kk = arith.index_cast %k : index to i64
    %t0 = arith.muli %ii, %m0 : i64
    %t1 = arith.muli %jj, %m1 : i64
    %s0 = arith.addi %t0, %t1 : i64
    %s1 = arith.addi %s0, %kk : i64
    %s2 = arith.addi %s1, %v : i64
    %s3 = arith.addi %s2, %c10 : i64
    memref.store %s3, %a[%i, %j, %k] : memref<5x3x400xi64>
  }
  return
}

func.func @tfew() -> i64 {
  %n = arith.constant 6000 : index
  %buf = func.call @zeroed(%n) : (index) -> memref<?xi64>
  %a = memref.reinterpret_cast %buf to offset: [0], sizes: [5, 3, 400], strides: [1200, 400, 1] : memref<?xi64> to memref<5x3x400xi64>
  func.call @tfew_kernel(%a) : (memref<5x3x400xi64>) -> ()
  %r = func.call @checksum(%buf) : (memref<?xi64>) -> i64
  memref.dealloc %buf : memref<?xi64>
  return %r : i64
}

// Dynamic upper bounds and a nested loop of dynamic trip count: the nested
// loop makes all three dimensions linear, the body dividing by the run-time
// trip counts of the last two. Calls with an empty dimension (u1 = 0: -2
// iterations before clamping, next to 4 of the first dimension) must run
// nothing. a[i, j, k] += 10000 i + 100 j + k + t + 10 over
// range(1, u0, 2) x range(2, u1) x range(0, u2, 3), t in range(m).
func.func @tdyn_kernel(%a: memref<?x?x?xi64>, %u0: index, %u1: index, %u2: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %m0 = arith.constant 10000 : i64
  %m1 = arith.constant 100 : i64
  %c10 = arith.constant 10 : i64
  scf.parallel (%i, %j, %k) = (%c1, %c2, %c0) to (%u0, %u1, %u2) step (%c2, %c1, %c3) {
    scf.for %t = %c0 to %m step %c1 {
      %v = memref.load %a[%i, %j, %k] : memref<?x?x?xi64>
      %ii = arith.index_cast %i : index to i64
      %jj = arith.index_cast %j : index to i64
      %kk = arith.index_cast %k : index to i64
      %tt = arith.index_cast %t : index to i64
      %t0 = arith.muli %ii, %m0 : i64
      %t1 = arith.muli %jj, %m1 : i64
      %s0 = arith.addi %t0, %t1 : i64
      %s1 = arith.addi %s0, %kk : i64
      %s2 = arith.addi %s1, %tt : i64
      %s3 = arith.addi %s2, %v : i64
      %s4 = arith.addi %s3, %c10 : i64
      memref.store %s4, %a[%i, %j, %k] : memref<?x?x?xi64>
    }
  }
  return
}

func.func @tdyn() -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c9 = arith.constant 9 : index
  %c10 = arith.constant 10 : index
  %n = arith.constant 630 : index
  %buf = func.call @zeroed(%n) : (index) -> memref<?xi64>
  %a = memref.reinterpret_cast %buf to offset: [0], sizes: [9, 7, 10], strides: [70, 10, 1] : memref<?xi64> to memref<?x?x?xi64>
  func.call @tdyn_kernel(%a, %c9, %c7, %c10, %c2) : (memref<?x?x?xi64>, index, index, index, index) -> ()
  func.call @tdyn_kernel(%a, %c0, %c0, %c10, %c1) : (memref<?x?x?xi64>, index, index, index, index) -> ()
  func.call @tdyn_kernel(%a, %c9, %c0, %c10, %c1) : (memref<?x?x?xi64>, index, index, index, index) -> ()
  func.call @tdyn_kernel(%a, %c5, %c7, %c10, %c0) : (memref<?x?x?xi64>, index, index, index, index) -> ()
  func.call @tdyn_kernel(%a, %c7, %c5, %c3, %c3) : (memref<?x?x?xi64>, index, index, index, index) -> ()
  %r = func.call @checksum(%buf) : (memref<?xi64>) -> i64
  memref.dealloc %buf : memref<?xi64>
  return %r : i64
}

// An scf.parallel inside a sequential loop (the call stays in the loop and
// captures its induction variable), with an scf.parallel nested in it that
// is part of the outlined body, and wide enough (32) to get an access group
// from grove-host-loop-hints. a[i, j] += 1000 r + 10 i + j + 1 for r in
// range(3), i in range(50), j in range(32).
func.func @tnest_kernel(%a: memref<50x32xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c32 = arith.constant 32 : index
  %c50 = arith.constant 50 : index
  %one = arith.constant 1 : i64
  %c10 = arith.constant 10 : i64
  %c1000 = arith.constant 1000 : i64
  scf.for %r = %c0 to %c3 step %c1 {
    %rr = arith.index_cast %r : index to i64
    %base = arith.muli %rr, %c1000 : i64
    scf.parallel (%i) = (%c0) to (%c50) step (%c1) {
      scf.parallel (%j) = (%c0) to (%c32) step (%c1) {
        %v = memref.load %a[%i, %j] : memref<50x32xi64>
        %ii = arith.index_cast %i : index to i64
        %jj = arith.index_cast %j : index to i64
        %t0 = arith.muli %ii, %c10 : i64
        %s0 = arith.addi %base, %t0 : i64
        %s1 = arith.addi %s0, %jj : i64
        %s2 = arith.addi %s1, %one : i64
        %s3 = arith.addi %s2, %v : i64
        memref.store %s3, %a[%i, %j] : memref<50x32xi64>
      }
    }
  }
  return
}

func.func @tnest() -> i64 {
  %n = arith.constant 1600 : index
  %buf = func.call @zeroed(%n) : (index) -> memref<?xi64>
  %a = memref.cast %buf : memref<?xi64> to memref<?xi64>
  %a2 = memref.reinterpret_cast %a to offset: [0], sizes: [50, 32], strides: [32, 1] : memref<?xi64> to memref<50x32xi64>
  func.call @tnest_kernel(%a2) : (memref<50x32xi64>) -> ()
  %r = func.call @checksum(%buf) : (memref<?xi64>) -> i64
  memref.dealloc %buf : memref<?xi64>
  return %r : i64
}

// A loop whose body holds a nested loop with a constant trip count of 0 next
// to real work: the empty loop does not make the work 0, so the loop is
// outlined (and dispatched); the empty loop, which would spoil a[0] if it
// ran, must still run no iteration. a[i] += i + 10 for i in range(2, 100, 3).
func.func @tzero_kernel(%a: memref<100xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c100 = arith.constant 100 : index
  %c10 = arith.constant 10 : i64
  %big = arith.constant 1000000 : i64
  scf.parallel (%i) = (%c2) to (%c100) step (%c3) {
    %v = memref.load %a[%i] : memref<100xi64>
    %ii = arith.index_cast %i : index to i64
    %s0 = arith.addi %v, %ii : i64
    %s1 = arith.addi %s0, %c10 : i64
    memref.store %s1, %a[%i] : memref<100xi64>
    scf.for %j = %c0 to %c0 step %c1 {
      %w = memref.load %a[%j] : memref<100xi64>
      %x = arith.addi %w, %big : i64
      memref.store %x, %a[%j] : memref<100xi64>
    }
  }
  return
}

func.func @tzero() -> i64 {
  %n = arith.constant 100 : index
  %buf = func.call @zeroed(%n) : (index) -> memref<?xi64>
  %a = memref.cast %buf : memref<?xi64> to memref<100xi64>
  func.call @tzero_kernel(%a) : (memref<100xi64>) -> ()
  %r = func.call @checksum(%buf) : (memref<?xi64>) -> i64
  memref.dealloc %buf : memref<?xi64>
  return %r : i64
}

// A stand-in for the runtime's service: fn(ctx, max(b - 2, lo), b) for b
// from hi down to lo, so no sub-range starts at 0 except the last.
llvm.func @grove_rt_parallel_for(%fn: !llvm.ptr, %ctx: !llvm.ptr, %lo: i64, %hi: i64, %work: i64, %name: !llvm.ptr) {
  %c2 = llvm.mlir.constant(2 : i64) : i64
  llvm.br ^loop(%hi : i64)
^loop(%b: i64):
  %more = llvm.icmp "sgt" %b, %lo : i64
  llvm.cond_br %more, ^body, ^done
^body:
  %a0 = llvm.sub %b, %c2 : i64
  %a = llvm.intr.smax(%a0, %lo) : (i64, i64) -> i64
  llvm.call %fn(%ctx, %a, %b) : !llvm.ptr, (!llvm.ptr, i64, i64) -> ()
  llvm.br ^loop(%a : i64)
^done:
  llvm.return
}

// A dynamic middle dimension between constant ones, an outer step of 2: the
// body divides the range index by the dynamic count, and chunks of two
// linear iterations start in the middle of j.
func.func @tmix_kernel(%a: memref<?x?x?xi64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %m0 = arith.constant 10000 : i64
  %m1 = arith.constant 100 : i64
  %one = arith.constant 1 : i64
  scf.parallel (%i, %j, %k) = (%c0, %c1, %c0) to (%c4, %n, %c6) step (%c2, %c1, %c2) {
    %v = memref.load %a[%i, %j, %k] : memref<?x?x?xi64>
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %kk = arith.index_cast %k : index to i64
    %t0 = arith.muli %ii, %m0 : i64
    %t1 = arith.muli %jj, %m1 : i64
    %s0 = arith.addi %t0, %t1 : i64
    %s1 = arith.addi %s0, %kk : i64
    %s2 = arith.addi %s1, %one : i64
    %s3 = arith.addi %s2, %v : i64
    memref.store %s3, %a[%i, %j, %k] : memref<?x?x?xi64>
  }
  return
}

func.func @tmix() -> i64 {
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %n = arith.constant 120 : index
  %buf = func.call @zeroed(%n) : (index) -> memref<?xi64>
  %a = memref.reinterpret_cast %buf to offset: [0], sizes: [4, 5, 6], strides: [30, 6, 1] : memref<?xi64> to memref<?x?x?xi64>
  func.call @tmix_kernel(%a, %c5) : (memref<?x?x?xi64>, index) -> ()
  func.call @tmix_kernel(%a, %c3) : (memref<?x?x?xi64>, index) -> ()
  %r = func.call @checksum(%buf) : (memref<?xi64>) -> i64
  memref.dealloc %buf : memref<?xi64>
  return %r : i64
}

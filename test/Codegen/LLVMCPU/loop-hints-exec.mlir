// DEFINE: %{lower} = --convert-scf-to-cf --expand-strided-metadata --lower-affine --arith-expand --finalize-memref-to-llvm --convert-to-llvm --reconcile-unrealized-casts
// RUN: grove-opt %s %{lower} -o %t.ref.mlir
// RUN: grove-opt %s --grove-host-loop-hints %{lower} --grove-host-loop-metadata -o %t.hints.mlir
// RUN: grove-opt %s --grove-host-loop-hints | FileCheck %s --check-prefix=PROMOTED

// RUN: mlir-runner %t.ref.mlir -e alias_load -entry-point-result=f32 | FileCheck %s --check-prefix=ALIAS-LOAD
// RUN: mlir-runner -O3 %t.hints.mlir -e alias_load -entry-point-result=f32 | FileCheck %s --check-prefix=ALIAS-LOAD
// RUN: mlir-runner %t.ref.mlir -e alias_store -entry-point-result=f32 | FileCheck %s --check-prefix=ALIAS-STORE
// RUN: mlir-runner -O3 %t.hints.mlir -e alias_store -entry-point-result=f32 | FileCheck %s --check-prefix=ALIAS-STORE
// RUN: mlir-runner %t.ref.mlir -e other_view -entry-point-result=f32 | FileCheck %s --check-prefix=OTHER-VIEW
// RUN: mlir-runner -O3 %t.hints.mlir -e other_view -entry-point-result=f32 | FileCheck %s --check-prefix=OTHER-VIEW

// grove-host-loop-hints (LoopHints.cpp) keeps a reduction's accumulator in
// a register (load before the loop, iter_arg, store after) only when no
// other load in the loop reads a view of the accumulator's buffer: such a
// load may read the accumulated element itself, and must then see every
// iteration's store. Each entry point runs one kernel and returns the
// element it accumulates into; the build with the hints (compiled at -O3)
// must agree with the loops as written (ref) and with the values computed
// by hand below.

// The kernels that read the accumulated element through a view are left as
// they are; the one whose other load reads a view of another buffer is
// promoted.
// PROMOTED-LABEL: func.func @alias_load_kernel(
// PROMOTED-NOT: iter_args
// PROMOTED-LABEL: func.func @alias_store_kernel(
// PROMOTED-NOT: iter_args
// PROMOTED-LABEL: func.func @other_view_kernel(
// PROMOTED: scf.for {{.*}} iter_args
// PROMOTED-LABEL: func.func @other_view(

// a[0] = 1, then 3 times a[0] = a[0] + v[0] with v a subview of a starting
// at 0: the element doubles, 1 -> 2 -> 4 -> 8. Kept in a register, v[0]
// would stay 1: 4.
// ALIAS-LOAD: {{^}}8.000000e+00{{$}}
func.func @alias_load_kernel(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = memref.subview %a[0] [4] [1] : memref<?xf32> to memref<4xf32, strided<[1]>>
  scf.for %k = %c0 to %n step %c1 {
    %acc = memref.load %a[%c0] : memref<?xf32>
    %x = memref.load %v[%c0] : memref<4xf32, strided<[1]>>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %a[%c0] : memref<?xf32>
  }
  return
}

func.func @alias_load() -> f32 {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %a = memref.alloc(%c4) : memref<?xf32>
  memref.store %one, %a[%c0] : memref<?xf32>
  func.call @alias_load_kernel(%a, %c3) : (memref<?xf32>, index) -> ()
  %r = memref.load %a[%c0] : memref<?xf32>
  memref.dealloc %a : memref<?xf32>
  return %r : f32
}

// The accumulator is a view: v[0] with v = a[2:6], the other load reads
// a[2] directly, the same element. a[2] = 3, then 4 times doubled: 48
// (15 with a[2] read once and kept).
// ALIAS-STORE: {{^}}4.800000e+01{{$}}
func.func @alias_store_kernel(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %v = memref.subview %a[2] [4] [1] : memref<?xf32> to memref<4xf32, strided<[1], offset: 2>>
  scf.for %k = %c0 to %n step %c1 {
    %acc = memref.load %v[%c0] : memref<4xf32, strided<[1], offset: 2>>
    %x = memref.load %a[%c2] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %v[%c0] : memref<4xf32, strided<[1], offset: 2>>
  }
  return
}

func.func @alias_store() -> f32 {
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %three = arith.constant 3.0 : f32
  %a = memref.alloc(%c8) : memref<?xf32>
  memref.store %three, %a[%c2] : memref<?xf32>
  func.call @alias_store_kernel(%a, %c4) : (memref<?xf32>, index) -> ()
  %r = memref.load %a[%c2] : memref<?xf32>
  memref.dealloc %a : memref<?xf32>
  return %r : f32
}

// Promoted: c[1] += v[k] for k in range(4), v = b[2:6], b[e] = e + 1, so
// c[1] = 10 + 3 + 4 + 5 + 6 = 28.
// OTHER-VIEW: {{^}}2.800000e+01{{$}}
func.func @other_view_kernel(%b: memref<?xf32>, %c: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = memref.subview %b[2] [4] [1] : memref<?xf32> to memref<4xf32, strided<[1], offset: 2>>
  scf.for %k = %c0 to %n step %c1 {
    %acc = memref.load %c[%c1] : memref<?xf32>
    %x = memref.load %v[%k] : memref<4xf32, strided<[1], offset: 2>>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %c[%c1] : memref<?xf32>
  }
  return
}

func.func @other_view() -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %ten = arith.constant 10.0 : f32
  %b = memref.alloc(%c8) : memref<?xf32>
  scf.for %e = %c0 to %c8 step %c1 {
    %e1 = arith.addi %e, %c1 : index
    %i = arith.index_cast %e1 : index to i64
    %f = arith.sitofp %i : i64 to f32
    memref.store %f, %b[%e] : memref<?xf32>
  }
  %c = memref.alloc(%c2) : memref<?xf32>
  memref.store %ten, %c[%c1] : memref<?xf32>
  func.call @other_view_kernel(%b, %c, %c4) : (memref<?xf32>, memref<?xf32>, index) -> ()
  %r = memref.load %c[%c1] : memref<?xf32>
  memref.dealloc %b : memref<?xf32>
  memref.dealloc %c : memref<?xf32>
  return %r : f32
}

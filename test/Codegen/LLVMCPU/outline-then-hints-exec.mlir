// Outlining must not hide aliasing from the accumulator promotion: the
// subview %v of %a is rebuilt inside the range function (not passed as an
// unrelated argument), so grove-host-loop-hints still sees that the load of
// %v and the accumulator a[i] share a buffer, and keeps the loop as is.
// a = [1, 1, ...], three rounds of a[i] += v[i] (= a[i]) give 8 per element:
// 16 in all; promoting the accumulator would give 4 + 4 = 8.
// DEFINE: %{lower} = --scf-parallel-for-to-nested-fors --convert-scf-to-cf --expand-strided-metadata --lower-affine --arith-expand --finalize-memref-to-llvm --convert-to-llvm --reconcile-unrealized-casts
// RUN: grove-opt %s %{lower} -o %t.ref.mlir
// RUN: mlir-runner %t.ref.mlir -e main -entry-point-result=f32 | FileCheck %s
// RUN: grove-opt %s --grove-outline-parallel-loops=min-work=0 --grove-host-loop-hints %{lower} -o %t.hints.mlir
// RUN: mlir-runner -O3 %t.hints.mlir -e main -entry-point-result=f32 | FileCheck %s
// RUN: grove-opt %s --grove-outline-parallel-loops=min-work=0 --grove-host-loop-hints | FileCheck %s --check-prefix=IR
// CHECK: 1.600000e+01

// IR-LABEL: func.func private @kernel__parallel_0(
// IR-SAME: %{{[^:]*}}: index, %{{[^:]*}}: index, %[[A:[^:]*]]: memref<?xf32>, %{{[^:]*}}: index)
// IR: %[[V:.*]] = memref.subview %[[A]][0] [4] [1]
// IR: scf.for
// IR-NOT: iter_args
// IR: memref.load %[[A]]
// IR: memref.load %[[V]]
// IR: memref.store
func.func @kernel(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %v = memref.subview %a[0] [4] [1] : memref<?xf32> to memref<4xf32, strided<[1]>>
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    scf.for %k = %c0 to %n step %c1 {
      %acc = memref.load %a[%i] : memref<?xf32>
      %x = memref.load %v[%i] : memref<4xf32, strided<[1]>>
      %s = arith.addf %acc, %x : f32
      memref.store %s, %a[%i] : memref<?xf32>
    }
  }
  return
}
func.func @main() -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %a = memref.alloc(%c4) : memref<?xf32>
  memref.store %one, %a[%c0] : memref<?xf32>
  memref.store %one, %a[%c1] : memref<?xf32>
  func.call @kernel(%a, %c3) : (memref<?xf32>, index) -> ()
  %r0 = memref.load %a[%c0] : memref<?xf32>
  %r1 = memref.load %a[%c1] : memref<?xf32>
  %r = arith.addf %r0, %r1 : f32
  memref.dealloc %a : memref<?xf32>
  return %r : f32
}

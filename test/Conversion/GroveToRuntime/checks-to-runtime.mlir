// RUN: grove-opt %s -split-input-file --convert-grove-checks-to-runtime | FileCheck %s

// convert-grove-checks-to-runtime (GroveToRuntime/ChecksToRuntime.cpp): each
// grove.agree_dims becomes a guarded call of grove_rt_dim_mismatch and the
// smaller of the two sizes.

// One message global per distinct message, shared by equal ones; the
// result of one check feeds the next.
// CHECK-LABEL: func.func @checks
// CHECK-SAME: (%[[A:.*]]: index, %[[B:.*]]: index, %[[C:.*]]: index)
// CHECK: %[[NE0:.*]] = arith.cmpi ne, %[[A]], %[[B]] : index
// CHECK-NEXT: scf.if %[[NE0]] {
// CHECK-NEXT: %[[L0:.*]] = arith.index_cast %[[A]] : index to i64
// CHECK-NEXT: %[[R0:.*]] = arith.index_cast %[[B]] : index to i64
// CHECK-NEXT: %[[M0:.*]] = llvm.mlir.addressof @[[ADD_MSG:_grove\.check\.[0-9]+]] : !llvm.ptr
// CHECK-NEXT: func.call @grove_rt_dim_mismatch(%[[L0]], %[[R0]], %[[M0]]) : (i64, i64, !llvm.ptr) -> ()
// CHECK-NEXT: }
// CHECK-NEXT: %[[MIN0:.*]] = arith.minui %[[A]], %[[B]] : index
// CHECK-NEXT: %[[NE1:.*]] = arith.cmpi ne, %[[MIN0]], %[[C]] : index
// CHECK-NEXT: scf.if %[[NE1]] {
// CHECK: llvm.mlir.addressof @[[CONCAT_MSG:_grove\.check\.[0-9]+]] : !llvm.ptr
// CHECK: }
// CHECK-NEXT: %[[MIN1:.*]] = arith.minui %[[MIN0]], %[[C]] : index
// CHECK-NEXT: %[[NE2:.*]] = arith.cmpi ne, %[[A]], %[[C]] : index
// CHECK-NEXT: scf.if %[[NE2]] {
// CHECK: llvm.mlir.addressof @[[ADD_MSG]] : !llvm.ptr
// CHECK: }
// CHECK-NEXT: %[[MIN2:.*]] = arith.minui %[[A]], %[[C]] : index
// CHECK-NEXT: return %[[MIN0]], %[[MIN1]], %[[MIN2]]
// CHECK-NOT: grove.agree_dims
// CHECK: func.func private @grove_rt_dim_mismatch(i64, i64, !llvm.ptr)
// CHECK-DAG: llvm.mlir.global internal constant @[[ADD_MSG]]("f.mlir:1:2: grove.add operands 0 and 1, result dimension 0\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[CONCAT_MSG]]("f.mlir:3:4: grove.concat inputs 0 and 2, dimension 0\00")
// CHECK-NOT: llvm.mlir.global
func.func @checks(%a: index, %b: index, %c: index) -> (index, index, index) {
  %0 = grove.agree_dims %a, %b, "f.mlir:1:2: grove.add operands 0 and 1, result dimension 0" : index
  %1 = grove.agree_dims %0, %c, "f.mlir:3:4: grove.concat inputs 0 and 2, dimension 0" : index
  %2 = grove.agree_dims %a, %c, "f.mlir:1:2: grove.add operands 0 and 1, result dimension 0" : index
  return %0, %1, %2 : index, index, index
}

// -----

// An existing declaration is reused; a check in a nested region is
// expanded in place.
// CHECK-LABEL: module @reuse
// CHECK-NEXT: func.func private @grove_rt_dim_mismatch(i64, i64, !llvm.ptr)
// CHECK-LABEL: func.func @nested
// CHECK: scf.for
// CHECK: %[[NE:.*]] = arith.cmpi ne, %{{.*}}, %{{.*}} : index
// CHECK-NEXT: scf.if %[[NE]] {
// CHECK: func.call @grove_rt_dim_mismatch(
// CHECK: arith.minui
// CHECK-NOT: func.func private @grove_rt_dim_mismatch
module @reuse {
  func.func private @grove_rt_dim_mismatch(i64, i64, !llvm.ptr)
  func.func @nested(%n: index, %a: index, %b: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %i = %c0 to %n step %c1 {
      %0 = grove.agree_dims %a, %i, "loop" : index
    }
    return
  }
}

// -----

// No check: nothing declared.
// CHECK-LABEL: func.func @no_checks
// CHECK-NOT: grove_rt_dim_mismatch
// CHECK-NOT: llvm.mlir.global
func.func @no_checks(%a: index) -> index {
  return %a : index
}

// -----

// at_least: a size below its least reports through grove_rt_size_below
// (least, got, message), the runtime's "<message> of at least N, got M".
// CHECK-LABEL: func.func @at_least
// CHECK-SAME: (%[[LEAST:.*]]: index, %[[GOT:.*]]: index)
// CHECK: %[[NE:.*]] = arith.cmpi ne, %[[LEAST]], %[[GOT]] : index
// CHECK-NEXT: scf.if %[[NE]] {
// CHECK: func.call @grove_rt_size_below(
// CHECK-NOT: grove_rt_dim_mismatch
// CHECK: func.func private @grove_rt_size_below(i64, i64, !llvm.ptr)
func.func @at_least(%least: index, %got: index) -> index {
  %0 = grove.agree_dims %least, %got, "f.mlir:5:6: grove.conv2d: one window needs the input height plus padding" {at_least} : index
  return %0 : index
}

// -----

// The world's size and rank become calls of the runtime's queries, an i64
// cast to index, each declared once.
// CHECK-LABEL: func.func @world
// CHECK: %[[N:.*]] = call @grove_rt_world_size() : () -> i64
// CHECK-NEXT: %[[NI:.*]] = arith.index_cast %[[N]] : i64 to index
// CHECK-NEXT: %[[R:.*]] = call @grove_rt_world_rank() : () -> i64
// CHECK-NEXT: %[[RI:.*]] = arith.index_cast %[[R]] : i64 to index
// CHECK-NEXT: %[[M:.*]] = call @grove_rt_world_size() : () -> i64
// CHECK-NEXT: %[[MI:.*]] = arith.index_cast %[[M]] : i64 to index
// CHECK-NEXT: return %[[NI]], %[[RI]], %[[MI]]
// CHECK-NOT: grove.world
// CHECK-DAG: func.func private @grove_rt_world_size() -> i64
// CHECK-DAG: func.func private @grove_rt_world_rank() -> i64
func.func @world() -> (index, index, index) {
  %n = grove.world_size : index
  %r = grove.world_rank : index
  %m = grove.world_size : index
  return %n, %r, %m : index, index, index
}

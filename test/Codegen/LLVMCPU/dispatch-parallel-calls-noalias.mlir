// RUN: grove-opt %s --grove-dispatch-parallel-calls | FileCheck %s

// grove-dispatch-parallel-calls (DispatchParallelCalls.cpp) marks noalias
// the aligned pointer of each memref argument that
// grove-outline-parallel-loops recorded as unaliased (grove.noalias_args,
// memref-level indices into grove.memref_signature;
// outline-noalias.mlir). Each memref of rank r became (allocated, aligned,
// offset, r sizes, r strides), every other argument one: here index, index,
// memref<?xf32> (LLVM arguments 2-6, aligned 3), f32 (7), memref<4x4xf32>
// (8-14, aligned 9). Both markers are consumed. Diagnostics are in
// dispatch-parallel-calls-invalid.mlir.

// CHECK-LABEL: llvm.func internal @body(
// CHECK-SAME: %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr {llvm.noalias}, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: f32, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr {llvm.noalias}, %{{[^:]*}}: i64,
// CHECK-NOT: grove.noalias_args
// CHECK-NOT: grove.memref_signature
// CHECK: llvm.return
module {
  llvm.func internal @body(%lo: i64, %hi: i64,
      %a0: !llvm.ptr, %a1: !llvm.ptr, %a2: i64, %a3: i64, %a4: i64,
      %x: f32,
      %b0: !llvm.ptr, %b1: !llvm.ptr, %b2: i64, %b3: i64, %b4: i64, %b5: i64, %b6: i64)
      attributes {grove.parallel_body = 1 : i64,
                  grove.noalias_args = array<i64: 2, 4>,
                  grove.memref_signature = (index, index, memref<?xf32>, f32, memref<4x4xf32>) -> ()} {
    llvm.return
  }
  llvm.func @f(%n: i64, %p: !llvm.ptr, %x: f32) {
    %c0 = llvm.mlir.constant(0 : i64) : i64
    llvm.call @body(%c0, %n, %p, %p, %n, %n, %n, %x, %p, %p, %n, %n, %n, %n, %n) : (i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64, f32, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64) -> ()
    llvm.return
  }
}

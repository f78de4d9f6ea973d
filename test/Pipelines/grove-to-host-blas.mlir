// RUN: grove-opt %s --grove-to-host="threads=0" | FileCheck %s
// RUN: grove-opt %s --grove-to-host | FileCheck %s --check-prefix=NOLOOPS

// The BLAS calls grove-to-host makes for the MLP of models/mlp/mlp.mlir
// (copied, as in grove-to-host.mlir, which checks the rest).

// Both dense layers are one GEMM call each: x @ fc1.weight^T and
// hidden @ fc2.weight^T (transB = 1), overwriting their output (beta = 0,
// the zero fills folded away), on the exploded descriptors of abi.h.
// CHECK-LABEL: llvm.func internal @_grove_mlp_forward(
// CHECK-DAG: %[[C0:.*]] = llvm.mlir.constant(0 : index) : i64
// CHECK-DAG: %[[C1:.*]] = llvm.mlir.constant(1 : index) : i64
// CHECK-DAG: %[[C10:.*]] = llvm.mlir.constant(10 : index) : i64
// CHECK-DAG: %[[C128:.*]] = llvm.mlir.constant(128 : index) : i64
// CHECK-DAG: %[[BETA:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-DAG: %[[ALPHA:.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-DAG: %[[NOTRANS:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-DAG: %[[TRANS:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: %[[HALLOC:.*]] = llvm.call @_mlir_memref_to_llvm_alloc(%{{.*}}) : (i64) -> !llvm.ptr
// CHECK: %[[H:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK-NOT: llvm.store
// CHECK: llvm.call @grove_rt_matmul_f32(%[[NOTRANS]], %[[TRANS]], %[[ALPHA]], %[[BETA]],
// CHECK-SAME: %arg24, %arg25, %arg26, %arg27, %arg28, %arg29, %arg30,
// CHECK-SAME: %arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6,
// CHECK-SAME: %[[HALLOC]], %[[H]], %[[C0]], %arg27, %[[C128]], %[[C128]], %[[C1]])
// Bias + relu in between, into the hidden buffer; the first GEMM's buffer
// is freed right after.
// CHECK: %[[RALLOC:.*]] = llvm.call @_mlir_memref_to_llvm_alloc(%{{.*}}) : (i64) -> !llvm.ptr
// CHECK: %[[R:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK: llvm.intr.maximum
// CHECK: llvm.call @_mlir_memref_to_llvm_free(%[[HALLOC]])
// CHECK: %[[OALLOC:.*]] = llvm.call @_mlir_memref_to_llvm_alloc(%{{.*}}) : (i64) -> !llvm.ptr
// CHECK: %[[O:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK-NOT: llvm.store
// CHECK: llvm.call @grove_rt_matmul_f32(%[[NOTRANS]], %[[TRANS]], %[[ALPHA]], %[[BETA]],
// CHECK-SAME: %[[RALLOC]], %[[R]], %[[C0]], %arg27, %[[C128]], %[[C128]], %[[C1]],
// CHECK-SAME: %arg12, %arg13, %arg14, %arg15, %arg16, %arg17, %arg18,
// CHECK-SAME: %[[OALLOC]], %[[O]], %[[C0]], %arg27, %[[C10]], %[[C10]], %[[C1]])
// CHECK-NEXT: llvm.call @_mlir_memref_to_llvm_free(%[[RALLOC]])
// The service takes its memrefs as descriptors by pointer (abi.h): MLIR's
// C-interface wrapper packs them, and O3 inlines it into the caller.
// CHECK: llvm.func internal @grove_rt_matmul_f32(
// CHECK: llvm.call @_mlir_ciface_grove_rt_matmul_f32(%arg0, %arg1, %arg2, %arg3, %{{.*}}, %{{.*}}, %{{.*}}) : (i32, i32, f32, f32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK: llvm.func @_mlir_ciface_grove_rt_matmul_f32(i32, i32, f32, f32, !llvm.ptr, !llvm.ptr, !llvm.ptr)

// No multiply left anywhere: no matmul loop.
// NOLOOPS-NOT: llvm.fmul
// NOLOOPS-NOT: grove_rt_batch_matmul_f32

module @mlp {
  grove.param @fc1.weight : tensor<128x64xf32>
  grove.param @fc1.bias : tensor<128xf32>
  grove.param @fc2.weight : tensor<10x128xf32>
  grove.param @fc2.bias : tensor<10xf32>

  func.func @forward(%x: tensor<?x64xf32> {grove.name = "x"})
      -> (tensor<?x10xf32> {grove.name = "logits"}) {
    %w1 = grove.get_param @fc1.weight : tensor<128x64xf32>
    %b1 = grove.get_param @fc1.bias : tensor<128xf32>
    %w2 = grove.get_param @fc2.weight : tensor<10x128xf32>
    %b2 = grove.get_param @fc2.bias : tensor<10xf32>
    %h = grove.matmul %x, %w1 {transpose_rhs}
        : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
    %hb = grove.add %h, %b1
        : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %a = grove.relu %hb : tensor<?x128xf32>
    %o = grove.matmul %a, %w2 {transpose_rhs}
        : (tensor<?x128xf32>, tensor<10x128xf32>) -> tensor<?x10xf32>
    %logits = grove.add %o, %b2
        : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
    return %logits : tensor<?x10xf32>
  }
}

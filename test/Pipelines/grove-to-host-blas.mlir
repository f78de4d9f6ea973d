// RUN: grove-opt %s --grove-to-host="threads=0" | FileCheck %s
// RUN: grove-opt %s --grove-to-host | FileCheck %s --check-prefix=NOLOOPS

// The BLAS calls grove-to-host makes for the MLP of models/mlp/mlp.mlir
// (copied, as in grove-to-host.mlir, which checks the rest).

// Both dense layers are one GEMM call each: x @ fc1.weight^T and
// hidden @ fc2.weight^T (transB = 1), overwriting their output (beta = 0,
// the zero fills folded away), on the descriptors (abi.h).
// CHECK-LABEL: llvm.func internal @_grove_mlp_forward(
// The signature, by the roles grove-params-to-arguments gave the arguments:
// fc1.weight, fc1.bias, fc2.weight, fc2.bias (state, declaration order), x.
// CHECK-SAME: %[[W1P:[^:]*]]: !llvm.ptr, %[[W1A:[^:]*]]: !llvm.ptr, %[[W1O:[^:]*]]: i64, %[[W1S0:[^:]*]]: i64, %[[W1S1:[^:]*]]: i64, %[[W1T0:[^:]*]]: i64, %[[W1T1:[^:]*]]: i64,
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr, %[[B1A:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64,
// CHECK-SAME: %[[W2P:[^:]*]]: !llvm.ptr, %[[W2A:[^:]*]]: !llvm.ptr, %[[W2O:[^:]*]]: i64, %[[W2S0:[^:]*]]: i64, %[[W2S1:[^:]*]]: i64, %[[W2T0:[^:]*]]: i64, %[[W2T1:[^:]*]]: i64,
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64,
// CHECK-SAME: %[[XP:[^:]*]]: !llvm.ptr, %[[XA:[^:]*]]: !llvm.ptr, %[[XO:[^:]*]]: i64, %[[N:[^:]*]]: i64, %[[XS1:[^:]*]]: i64, %[[XT0:[^:]*]]: i64, %[[XT1:[^:]*]]: i64)
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
// CHECK-SAME: %[[XP]], %[[XA]], %[[XO]], %[[N]], %[[XS1]], %[[XT0]], %[[XT1]],
// CHECK-SAME: %[[W1P]], %[[W1A]], %[[W1O]], %[[W1S0]], %[[W1S1]], %[[W1T0]], %[[W1T1]],
// CHECK-SAME: %[[HALLOC]], %[[H]], %[[C0]], %[[N]], %[[C128]], %[[C128]], %[[C1]])
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
// CHECK-SAME: %[[RALLOC]], %[[R]], %[[C0]], %[[N]], %[[C128]], %[[C128]], %[[C1]],
// CHECK-SAME: %[[W2P]], %[[W2A]], %[[W2O]], %[[W2S0]], %[[W2S1]], %[[W2T0]], %[[W2T1]],
// CHECK-SAME: %[[OALLOC]], %[[O]], %[[C0]], %[[N]], %[[C10]], %[[C10]], %[[C1]])
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

// RUN: grove-opt %s --grove-to-host="threads=0" | FileCheck %s --check-prefix=HOST
// RUN: grove-opt %s --grove-to-host="threads=0" | FileCheck %s --check-prefix=MAXCOUNT
// RUN: grove-opt %s --grove-to-host | FileCheck %s --check-prefix=CLEAN
// RUN: grove-opt %s --grove-to-host="blas=0 threads=0" | FileCheck %s --check-prefix=NOBLAS
// RUN: grove-opt %s --grove-to-host="blas=0" | FileCheck %s --check-prefix=CLEAN
// RUN: grove-opt %s --grove-common | FileCheck %s --check-prefix=COMMON

// The MLP of models/mlp/mlp.mlir (copied here so that the test does not
// follow the model) through the pipelines of Pipelines.cpp. The BLAS calls
// of the default pipeline are checked in grove-to-host-blas.mlir. The loop
// structure is checked without threads (threads=0): with them, the same loops
// sit in grove.parallel_body functions (grove-to-host-threads.mlir).

//===----------------------------------------------------------------------===//
// grove-to-host
//===----------------------------------------------------------------------===//

// The bias add and the relu are one loop nest: the fused body adds the bias
// (fc1.bias's aligned pointer, captured from the signature) to the first GEMM's result and takes
// the maximum with 0 in the same block, into a buffer of its own. The inner
// loop, 128 wide, is a parallel loop to LLVM (grove-host-loop-hints): its
// accesses are in the access group its back edge lists. The GEMM's buffer is
// freed right after that loop (grove-shorten-buffer-lifetimes), the hidden
// one right after the second GEMM, before the second bias loop, which is
// only 10 wide, below min-trip-count (16): no access group and no loop
// annotation, it is left to LLVM's full unroller. Buffers come from MLIR's
// generic allocation functions, which the runtime implements with a cache
// of large blocks (runtime/src/host/Memory.cpp), not from malloc.
// HOST-LABEL: llvm.func internal @_grove_mlp_forward(
// The signature, by the roles grove-params-to-arguments gave the arguments:
// fc1.weight, fc1.bias, fc2.weight, fc2.bias (state, declaration order), x.
// HOST-SAME: %[[W1P:[^:]*]]: !llvm.ptr, %[[W1A:[^:]*]]: !llvm.ptr, %[[W1O:[^:]*]]: i64, %[[W1S0:[^:]*]]: i64, %[[W1S1:[^:]*]]: i64, %[[W1T0:[^:]*]]: i64, %[[W1T1:[^:]*]]: i64,
// HOST-SAME: %{{[^:]*}}: !llvm.ptr, %[[B1A:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64,
// HOST-SAME: %[[W2P:[^:]*]]: !llvm.ptr, %[[W2A:[^:]*]]: !llvm.ptr, %[[W2O:[^:]*]]: i64, %[[W2S0:[^:]*]]: i64, %[[W2S1:[^:]*]]: i64, %[[W2T0:[^:]*]]: i64, %[[W2T1:[^:]*]]: i64,
// HOST-SAME: %{{[^:]*}}: !llvm.ptr, %[[B2A:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64,
// HOST-SAME: %[[XP:[^:]*]]: !llvm.ptr, %[[XA:[^:]*]]: !llvm.ptr, %[[XO:[^:]*]]: i64, %[[N:[^:]*]]: i64, %[[XS1:[^:]*]]: i64, %[[XT0:[^:]*]]: i64, %[[XT1:[^:]*]]: i64)
// HOST-DAG: %[[ZERO:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// HOST-NOT: @malloc
// HOST: %[[GALLOC:.*]] = llvm.call @_mlir_memref_to_llvm_alloc(%{{.*}}) : (i64) -> !llvm.ptr
// HOST: llvm.call @grove_rt_matmul_f32(
// HOST: %[[HALLOC:.*]] = llvm.call @_mlir_memref_to_llvm_alloc(%{{.*}}) : (i64) -> !llvm.ptr
// HOST: %[[H:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// HOST: %[[BP:.*]] = llvm.getelementptr inbounds|nuw %[[B1A]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// HOST-NEXT: %[[BIAS:.*]] = llvm.load %[[BP]] {access_groups = [#[[G1:access_group[0-9]*]]]} : !llvm.ptr -> f32
// HOST-NEXT: %[[SUM:.*]] = llvm.fadd %{{.*}}, %[[BIAS]] : f32
// HOST-NEXT: %[[RELU:.*]] = llvm.intr.maximum(%[[SUM]], %[[ZERO]]) : (f32, f32) -> f32
// HOST-NOT: llvm.br
// HOST: %[[HP:.*]] = llvm.getelementptr inbounds|nuw %[[H]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// HOST-NEXT: llvm.store %[[RELU]], %[[HP]] {access_groups = [#[[G1]]]} : f32, !llvm.ptr
// HOST-NEXT: llvm.add
// HOST-NEXT: llvm.br ^bb{{[0-9]+}}(%{{.*}} : i64) {loop_annotation = #loop_annotation{{[0-9]*}}}
// HOST: llvm.call @_mlir_memref_to_llvm_free(%[[GALLOC]]) : (!llvm.ptr) -> ()
// The second GEMM, then the hidden buffer is freed; the output buffer, then
// the second bias (fc2.bias) with no relu.
// HOST: llvm.call @grove_rt_matmul_f32(
// HOST-NEXT: llvm.call @_mlir_memref_to_llvm_free(%[[HALLOC]]) : (!llvm.ptr) -> ()
// HOST: %[[OALLOC:.*]] = llvm.call @_mlir_memref_to_llvm_alloc(%{{.*}}) : (i64) -> !llvm.ptr
// HOST-NOT: access_groups
// HOST: %[[BP2:.*]] = llvm.getelementptr inbounds|nuw %[[B2A]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// HOST-NEXT: %[[BIAS2:.*]] = llvm.load %[[BP2]] : !llvm.ptr -> f32
// HOST-NEXT: %[[SUM2:.*]] = llvm.fadd %{{.*}}, %[[BIAS2]] : f32
// HOST-NOT: llvm.br
// HOST: llvm.store %[[SUM2]], %{{.*}} : f32, !llvm.ptr
// HOST-NEXT: llvm.add
// HOST-NEXT: llvm.br ^bb{{[0-9]+}}(%{{.*}} : i64){{$}}
// HOST-NOT: access_groups
// HOST-NOT: loop_annotation
// The second GEMM's buffer is freed; the result is returned, owned by the
// caller.
// HOST: llvm.call @_mlir_memref_to_llvm_free(
// HOST-NOT: llvm.call @_mlir_memref_to_llvm_free
// HOST: llvm.return %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// HOST-LABEL: llvm.func @mlp_forward(
// HOST-SAME: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) -> i32

// One maximum in the whole module: no separate relu loop.
// MAXCOUNT-COUNT-1: llvm.intr.maximum
// MAXCOUNT-NOT: llvm.intr.maximum

// Fully converted to the LLVM dialect. Every size the matmuls contract
// over is static: no run-time size check.
// CLEAN-NOT: unrealized_conversion_cast
// CLEAN-NOT: builtin.unrealized
// CLEAN-NOT: memref.
// CLEAN-NOT: linalg.
// CLEAN-NOT: scf.
// CLEAN-NOT: cf.
// CLEAN-NOT: arith.
// CLEAN-NOT: func.func
// CLEAN-NOT: grove.abi
// CLEAN-NOT: grove.agree_dims
// CLEAN-NOT: grove_rt_dim_mismatch
// CLEAN: llvm.mlir.global external constant @mlp_model()

// Without BLAS the matmuls are loops (a multiply-add in the innermost
// body), and nothing calls the runtime's GEMM.
// NOBLAS-NOT: grove_rt_matmul_f32
// NOBLAS-NOT: grove_rt_batch_matmul_f32
// NOBLAS-LABEL: llvm.func internal @_grove_mlp_forward(
// NOBLAS: %[[P1:.*]] = llvm.fmul %{{.*}}, %{{.*}} : f32
// NOBLAS-NEXT: llvm.fadd %{{.*}}, %[[P1]] : f32
// NOBLAS: llvm.intr.maximum
// NOBLAS: %[[P2:.*]] = llvm.fmul %{{.*}}, %{{.*}} : f32
// NOBLAS-NEXT: llvm.fadd %{{.*}}, %[[P2]] : f32
// NOBLAS-NOT: llvm.fmul
// NOBLAS-LABEL: llvm.func internal @_mlir_ciface__grove_mlp_forward(
// NOBLAS-NOT: grove_rt_matmul_f32
// NOBLAS-NOT: grove_rt_batch_matmul_f32

//===----------------------------------------------------------------------===//
// grove-common
//===----------------------------------------------------------------------===//

// Stops at bufferized linalg on memrefs: params are leading memref
// arguments, the matmuls keep their transposed-rhs maps and start from a
// zero fill of their own buffer (a bufferization.alloc_tensor, which CSE
// does not merge), bias + relu is one generic writing into a buffer of its
// own (not in place: nothing in the pipeline reuses an input as the
// destination), and the ABI attributes are still there.
// COMMON-DAG: #[[$A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// COMMON-DAG: #[[$B_T:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// COMMON-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// COMMON-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// COMMON-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// COMMON-LABEL: module @mlp attributes
// COMMON-SAME: grove.abi.model = #grove.abi_model<module = "mlp", target = "host"
// COMMON-LABEL: func.func @_grove_mlp_forward(
// COMMON-SAME: %[[W1:[^:]*]]: memref<128x64xf32> {grove.state = @fc1.weight},
// COMMON-SAME: %[[B1:[^:]*]]: memref<128xf32> {grove.state = @fc1.bias},
// COMMON-SAME: %[[W2:[^:]*]]: memref<10x128xf32> {grove.state = @fc2.weight},
// COMMON-SAME: %[[B2:[^:]*]]: memref<10xf32> {grove.state = @fc2.bias},
// COMMON-SAME: %[[X:[^:]*]]: memref<?x64xf32> {grove.name = "x"})
// COMMON-SAME: -> (memref<?x10xf32> {grove.name = "logits"})
// COMMON-SAME: attributes {grove.abi.entry = 0 : i64, grove.abi.inputs = 1 : i64, grove.abi.name = "forward", llvm.emit_c_interface}
// COMMON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// COMMON-DAG: %[[N:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x64xf32>
// COMMON: %[[H:.*]] = memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<?x128xf32>
// COMMON-NEXT: linalg.fill ins(%[[ZERO]] : f32) outs(%[[H]] : memref<?x128xf32>)
// COMMON-NEXT: linalg.matmul indexing_maps = [#[[$A]], #[[$B_T]], #[[$C]]] ins(%[[X]], %[[W1]] : memref<?x64xf32>, memref<128x64xf32>) outs(%[[H]] : memref<?x128xf32>)
// COMMON-NEXT: %[[H2:.*]] = memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<?x128xf32>
// COMMON-NEXT: linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[H]], %[[B1]] : memref<?x128xf32>, memref<128xf32>) outs(%[[H2]] : memref<?x128xf32>)
// COMMON-NEXT: ^bb0(%[[HI:.*]]: f32, %[[BI:.*]]: f32, %{{.*}}: f32):
// COMMON-NEXT: %[[S:.*]] = arith.addf %[[HI]], %[[BI]] : f32
// COMMON-NEXT: %[[R:.*]] = arith.maximumf %[[S]], %[[ZERO]] : f32
// COMMON-NEXT: linalg.yield %[[R]] : f32
// COMMON: %[[O:.*]] = memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<?x10xf32>
// COMMON-NEXT: linalg.fill ins(%[[ZERO]] : f32) outs(%[[O]] : memref<?x10xf32>)
// COMMON-NEXT: linalg.matmul indexing_maps = [#[[$A]], #[[$B_T]], #[[$C]]] ins(%[[H2]], %[[W2]] : memref<?x128xf32>, memref<10x128xf32>) outs(%[[O]] : memref<?x10xf32>)
// COMMON-NEXT: %[[Y:.*]] = memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<?x10xf32>
// COMMON-NEXT: linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[O]], %[[B2]] : memref<?x10xf32>, memref<10xf32>) outs(%[[Y]] : memref<?x10xf32>)
// COMMON-NEXT: ^bb0(%[[OI:.*]]: f32, %[[BI2:.*]]: f32, %{{.*}}: f32):
// COMMON-NEXT: %[[S2:.*]] = arith.addf %[[OI]], %[[BI2]] : f32
// COMMON-NEXT: linalg.yield %[[S2]] : f32
// COMMON: return %[[Y]] : memref<?x10xf32>
// COMMON-NOT: tensor
// COMMON-NOT: llvm.func
// COMMON-NOT: grove.get_param

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

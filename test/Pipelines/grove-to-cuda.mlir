// REQUIRES: cuda-target
// RUN: grove-opt %s --grove-to-cuda > %t.fatbin.mlir
// RUN: FileCheck %s --check-prefix=HOST < %t.fatbin.mlir
// RUN: FileCheck %s --check-prefix=FATBIN < %t.fatbin.mlir
// RUN: grove-opt %s --grove-to-cuda=gpu-format=isa | sed -e 's/\\0A/\n/g' -e 's/\\09/ /g' > %t.ptx.mlir
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx.mlir
// RUN: FileCheck %s --check-prefix=CLEAN < %t.ptx.mlir
// RUN: grove-opt %s --grove-to-cuda="chip=sm_80 gpu-format=isa" | sed -e 's/\\0A/\n/g' -e 's/\\09/ /g' | FileCheck %s --check-prefix=SM80

// The MLP of models/mlp/mlp.mlir (copied, as in grove-to-host.mlir) plus a
// softmax and a row maximum, through grove-to-cuda (Pipelines.cpp): the
// dense layers are cuBLAS calls, every other linalg op one kernel, every
// buffer a device buffer, the kernels embedded as a fatbin (HOST, FATBIN).
// With gpu-format=isa the kernels are embedded as PTX text instead; sed
// unescapes it so that PTX checks one instruction per line (PTX, CLEAN,
// SM80). The host code does not depend on the format.

//===----------------------------------------------------------------------===//
// Host code
//===----------------------------------------------------------------------===//

// forward: GEMM (x @ fc1.weight^T, transB = 1, beta = 0: the zero fill is
// folded away) into a device buffer, the fused bias + relu kernel into a
// second one, after which the first is freed (grove-shorten-buffer-
// lifetimes: at its last use, in stream order), GEMM (hidden @
// fc2.weight^T), the hidden buffer freed, the bias kernel into the result,
// the second GEMM's buffer freed; the result is returned (the runtime owns
// it). 2-D operands are passed as rank-3 views: a batch of one, batch
// stride 0.
// HOST-LABEL: llvm.func internal @_grove_mlp_forward(
// The signature, by the roles grove-params-to-arguments gave the arguments:
// fc1.weight, fc1.bias, fc2.weight, fc2.bias (state, declaration order), x.
// HOST-SAME: %[[W1P:[^:]*]]: !llvm.ptr, %[[W1A:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64,
// HOST-SAME: %[[B1P:[^:]*]]: !llvm.ptr, %[[B1A:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64,
// HOST-SAME: %[[W2P:[^:]*]]: !llvm.ptr, %[[W2A:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64,
// HOST-SAME: %[[B2P:[^:]*]]: !llvm.ptr, %[[B2A:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64,
// HOST-SAME: %[[XP:[^:]*]]: !llvm.ptr, %[[XA:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i64, %[[N:[^:]*]]: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64)
// HOST-DAG: %[[NOTSHARED:.*]] = llvm.mlir.constant(0 : i8) : i8
// HOST-DAG: %[[C256:.*]] = llvm.mlir.constant(256 : index) : i64
// HOST-DAG: %[[ALPHA:.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// HOST-DAG: %[[TRANS:.*]] = llvm.mlir.constant(1 : i32) : i32
// HOST-DAG: %[[NOTRANS:.*]] = llvm.mlir.constant(0 : i32) : i32
// HOST-DAG: %[[BETA:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// HOST-DAG: %[[C0:.*]] = llvm.mlir.constant(0 : index) : i64
// HOST-DAG: %[[C1:.*]] = llvm.mlir.constant(1 : index) : i64
// HOST-DAG: %[[C64:.*]] = llvm.mlir.constant(64 : index) : i64
// HOST-DAG: %[[C128:.*]] = llvm.mlir.constant(128 : index) : i64
// HOST-DAG: %[[C10:.*]] = llvm.mlir.constant(10 : index) : i64
// HOST: %[[S0:.*]] = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr
// HOST: %[[G:.*]] = llvm.call @mgpuMemAlloc(%{{.*}}, %[[S0]], %[[NOTSHARED]]) : (i64, !llvm.ptr, i8) -> !llvm.ptr
// HOST: llvm.call @grove_rt_cuda_gemm_f32(%[[NOTRANS]], %[[TRANS]], %[[ALPHA]], %[[BETA]],
// HOST-SAME: %[[XP]], %[[XA]], %[[C0]], %[[C1]], %[[N]], %[[C64]], %[[C0]], %[[C64]], %[[C1]],
// HOST-SAME: %[[W1P]], %[[W1A]], %[[C0]], %[[C1]], %[[C128]], %[[C64]], %[[C0]], %[[C64]], %[[C1]],
// HOST-SAME: %[[G]], %[[G]], %[[C0]], %[[C1]], %[[N]], %[[C128]], %[[C0]], %[[C128]], %[[C1]])
// HOST: %[[S1:.*]] = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr
// HOST: %[[H:.*]] = llvm.call @mgpuMemAlloc(%{{.*}}, %[[S1]], %[[NOTSHARED]])
// One thread per hidden element: grid = ceildiv(batch * 128, 256).
// HOST: %[[TOTAL:.*]] = llvm.mul %[[N]], %[[C128]] : i64
// HOST: llvm.udiv %{{.*}}, %[[C256]] : i64
// HOST: %[[GRID:.*]] = llvm.select
// HOST-NEXT: gpu.launch_func <%[[S1]] : !llvm.ptr> @_grove_mlp_forward_k0_map::@_grove_mlp_forward_k0_map blocks in (%[[GRID]], %[[C1]], %[[C1]]) threads in (%[[C256]], %[[C1]], %[[C1]]) : i64
// The block size is a constant inside the kernel, not a parameter.
// HOST-SAME: args(%[[TOTAL]] : i64,
// HOST-SAME: %[[G]] : !llvm.ptr, %[[G]] : !llvm.ptr,
// HOST-SAME: %[[B1P]] : !llvm.ptr, %[[B1A]] : !llvm.ptr,
// HOST-SAME: %[[H]] : !llvm.ptr, %[[H]] : !llvm.ptr,
// HOST-NEXT: llvm.call @mgpuMemFree(%[[G]], %[[S1]]) : (!llvm.ptr, !llvm.ptr) -> ()
// HOST: %[[O:.*]] = llvm.call @mgpuMemAlloc(%{{.*}}, %[[S1]], %[[NOTSHARED]])
// HOST: llvm.call @grove_rt_cuda_gemm_f32(%[[NOTRANS]], %[[TRANS]], %[[ALPHA]], %[[BETA]],
// HOST-SAME: %[[H]], %[[H]], %[[C0]], %[[C1]], %[[N]], %[[C128]], %[[C0]], %[[C128]], %[[C1]],
// HOST-SAME: %[[W2P]], %[[W2A]], %[[C0]], %[[C1]], %[[C10]], %[[C128]], %[[C0]], %[[C128]], %[[C1]],
// HOST-SAME: %[[O]], %[[O]], %[[C0]], %[[C1]], %[[N]], %[[C10]], %[[C0]], %[[C10]], %[[C1]])
// HOST: %[[S2:.*]] = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr
// HOST-NEXT: llvm.call @mgpuMemFree(%[[H]], %[[S2]]) : (!llvm.ptr, !llvm.ptr) -> ()
// HOST: %[[Y:.*]] = llvm.call @mgpuMemAlloc(%{{.*}}, %[[S2]], %[[NOTSHARED]])
// HOST-NEXT: %[[R0:.*]] = llvm.insertvalue %[[Y]], %{{.*}}[0]
// HOST-NEXT: %[[R1:.*]] = llvm.insertvalue %[[Y]], %[[R0]][1]
// HOST: gpu.launch_func <%[[S2]] : !llvm.ptr> @_grove_mlp_forward_k1_map::@_grove_mlp_forward_k1_map blocks in
// HOST-SAME: %[[O]] : !llvm.ptr, %[[O]] : !llvm.ptr,
// HOST-SAME: %[[B2P]] : !llvm.ptr, %[[B2A]] : !llvm.ptr,
// HOST-SAME: %[[Y]] : !llvm.ptr, %[[Y]] : !llvm.ptr,
// HOST-NEXT: llvm.call @mgpuMemFree(%[[O]], %[[S2]]) : (!llvm.ptr, !llvm.ptr) -> ()
// HOST-NOT: @mgpuMemFree
// HOST: llvm.return %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>

// probs: one stream for the whole function, one kernel per linalg op (each
// reduction's initial fill is folded into its kernel): max reduction (one
// thread per row); the sum of exp(x - max) (one thread per row); the
// quotient, recomputing exp(x - max) rather than reading a stored one, then
// the max and the sum are freed; the row maximum returned is a reduction of
// its own (the fills are allocations, which CSE does not merge, so neither
// are the two equal reductions).
// HOST-LABEL: llvm.func internal @_grove_mlp_probs(
// HOST: %[[S:.*]] = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr
// HOST: %[[MAX:.*]] = llvm.call @mgpuMemAlloc(%{{.*}}, %[[S]], %{{.*}})
// HOST: %[[ROWS:.*]] = llvm.select
// HOST-NEXT: gpu.launch_func <%[[S]] : !llvm.ptr> @_grove_mlp_probs_k0_reduce::@_grove_mlp_probs_k0_reduce blocks in (%[[ROWS]],
// HOST-SAME: %[[MAX]] : !llvm.ptr
// HOST: %[[SUM:.*]] = llvm.call @mgpuMemAlloc(%{{.*}}, %[[S]], %{{.*}})
// HOST-NEXT: gpu.launch_func <%[[S]] : !llvm.ptr> @_grove_mlp_probs_k1_reduce::@_grove_mlp_probs_k1_reduce blocks in (%[[ROWS]],
// HOST-SAME: %[[MAX]] : !llvm.ptr, {{.*}} %[[SUM]] : !llvm.ptr
// HOST: %[[ELEMS:.*]] = llvm.select
// HOST-NEXT: gpu.launch_func <%[[S]] : !llvm.ptr> @_grove_mlp_probs_k2_map::@_grove_mlp_probs_k2_map blocks in (%[[ELEMS]],
// HOST-SAME: %[[MAX]] : !llvm.ptr, {{.*}} %[[SUM]] : !llvm.ptr
// HOST-NEXT: llvm.call @mgpuMemFree(%[[SUM]], %[[S]])
// HOST-NEXT: llvm.call @mgpuMemFree(%[[MAX]], %[[S]])
// HOST: %[[RMAX:.*]] = llvm.call @mgpuMemAlloc(%{{.*}}, %[[S]], %{{.*}})
// HOST: gpu.launch_func <%[[S]] : !llvm.ptr> @_grove_mlp_probs_k3_reduce::@_grove_mlp_probs_k3_reduce blocks in (%[[ROWS]],
// HOST-SAME: %[[RMAX]] : !llvm.ptr
// HOST-NOT: @mgpuMemFree
// HOST-NOT: gpu.launch_func
// HOST: llvm.return

// The runtime's GEMM on rank-3 descriptors by pointer, and the descriptor
// says which runtime the library needs.
// HOST: llvm.func @_mlir_ciface_grove_rt_cuda_gemm_f32(i32, i32, f32, f32, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// HOST: @_grove.mlp.desc("{\22format\22:\22grove-model\22,\22version\22:7,\22module\22:\22mlp\22,\22target\22:\22cuda\22,\0A\22state\22:[\0A{\22name\22:\22fc1.weight\22,\22dtype\22:\22f32\22,\22shape\22:[128,64]}
// HOST-SAME: {\22name\22:\22forward\22,\22args\22:[\0A{\22state\22:\22fc1.weight\22,\22access\22:\22read\22}
// HOST-SAME: {\22name\22:\22probs\22,\22args\22:[\0A{\22input\22:0}],

// Six kernel modules, each a fatbin (magic 0xBA55ED50) for sm_90 in the
// section grove-fatbin and the runtime look for; no PTX text, no GPU
// module left.
// FATBIN-NOT: gpu.module
// FATBIN-COUNT-6: gpu.binary @{{[a-z_0-9]+}} [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, properties = {{.*}}section = ".grove_fatbin"}, "P\EDU\BA
// FATBIN-NOT: gpu.binary
// FATBIN-NOT: assembly =
// FATBIN-NOT: gpu.module

//===----------------------------------------------------------------------===//
// Kernels (PTX)
//===----------------------------------------------------------------------===//

// The fused bias + relu: global id from %ctaid.x and %tid.x, the bounds
// guard (the only branch: no loop), two global loads, add,
// NaN-propagating max (arith.maximumf), store.
// PTX-LABEL: gpu.binary @_grove_mlp_forward_k0_map [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, properties = {{.*}}section = ".grove_fatbin"}, assembly = "//
// PTX: .target sm_90
// PTX: .visible .entry _grove_mlp_forward_k0_map(
// PTX: .maxntid 256, 1, 1
// PTX: mov.u32 %r{{[0-9]+}}, %ctaid.x;
// PTX: mov.u32 %r{{[0-9]+}}, %tid.x;
// The block size is a constant in the kernel (sunk before outlining).
// PTX: mul.wide.u32 %rd{{[0-9]+}}, %r{{[0-9]+}}, 256;
// PTX-NEXT: or.b64 %rd[[GID:[0-9]+]],
// PTX-NEXT: setp.ge.u64 %p[[OUT:[0-9]+]], %rd[[GID]], %rd{{[0-9]+}};
// PTX-NEXT: @%p[[OUT]] bra $L__BB0_[[EXIT:[0-9]+]];
// PTX-NOT: bra
// The bias column is the id modulo the static 128: a mask, no division.
// PTX: and.b64 %rd{{[0-9]+}}, %rd{{[0-9]+}}, 127;
// PTX: ld.global.b32 %r[[H:[0-9]+]], [%rd{{[0-9]+}}];
// PTX: ld.global.b32 %r[[B:[0-9]+]], [%rd{{[0-9]+}}];
// PTX-NEXT: add.rn.f32 %r[[SUM:[0-9]+]], %r[[H]], %r[[B]];
// PTX-NEXT: max.NaN.f32 %r[[RELU:[0-9]+]], %r[[SUM]], 0f00000000;
// The result goes to a buffer of its own (its address computed here).
// PTX-NOT: {{bra|ld.global}}
// PTX: st.global.b32 [%rd{{[0-9]+}}], %r[[RELU]];
// PTX-NEXT: $L__BB0_[[EXIT]]:
// PTX-NEXT: ret;

// The second bias add: no relu.
// PTX-LABEL: gpu.binary @_grove_mlp_forward_k1_map [
// PTX: .target sm_90
// PTX: %ctaid.x
// PTX: ld.global.b32
// PTX: ld.global.b32
// PTX-NEXT: add.rn.f32
// PTX-NOT: max
// PTX: st.global.b32
// PTX: ret;

// The row maximum: sequential inside the thread, the accumulator in a
// register, starting from the fill's -inf (the fill is folded into the
// kernel: no fill kernel, and no load of the output). The row length (10)
// is a constant in the kernel, so the loop is fully unrolled: the ten
// loads and maxima (max(-inf, x) folds: nine of them), no branch back, and
// one store of the last maximum right before the exit.
// PTX-LABEL: gpu.binary @_grove_mlp_probs_k0_reduce [
// PTX: .target sm_90
// PTX: %ctaid.x
// PTX: @%p{{[0-9]+}} bra $L__BB0_[[EXIT:[0-9]+]];
// PTX-NOT: {{st\.global|bra}}
// PTX: ld.global.b32
// PTX-NEXT: ld.global.b32
// PTX-NEXT: max.NaN.f32
// PTX-NOT: {{st\.global|bra}}
// PTX: max.NaN.f32
// PTX-NOT: {{st\.global|bra}}
// PTX: max.NaN.f32
// PTX-NOT: {{st\.global|bra}}
// PTX: max.NaN.f32
// PTX-NOT: {{st\.global|bra}}
// PTX: max.NaN.f32
// PTX-NOT: {{st\.global|bra}}
// PTX: max.NaN.f32
// PTX-NOT: {{st\.global|bra}}
// PTX: max.NaN.f32
// PTX-NOT: {{st\.global|bra}}
// PTX: max.NaN.f32
// PTX-NOT: {{st\.global|bra}}
// PTX: max.NaN.f32
// PTX-SAME: %r[[LAST:[0-9]+]],
// PTX-NEXT: shl.b64
// PTX-NEXT: add.s64 %rd[[OUT:[0-9]+]],
// PTX-NEXT: st.global.b32 [%rd[[OUT]]], %r[[LAST]];
// PTX-NEXT: $L__BB0_[[EXIT]]:
// PTX-NEXT: ret;

// The row sum of exp(x - max), one thread per row, unrolled over the 10
// columns: exp lowered in the kernel (libdevice), not called, and each term
// added to the running sum, the first to the fill's 0 (x + 0.0 does not
// fold: -0.0); one store, no branch inside the row.
// PTX-LABEL: gpu.binary @_grove_mlp_probs_k1_reduce [
// PTX: .target sm_90
// PTX: %ctaid.x
// PTX: @%p{{[0-9]+}} bra $L__BB0_[[EXIT:[0-9]+]];
// PTX-NOT: {{st\.global|bra|call}}
// PTX: sub.rn.f32
// PTX: ex2.approx
// PTX: add.rn.f32 %r{{[0-9]+}}, %r{{[0-9]+}}, 0f00000000;
// PTX-COUNT-9: ex2.approx
// PTX-NOT: {{st\.global|bra|call}}
// PTX: add.rn.f32 %r[[LAST:[0-9]+]],
// PTX-NOT: {{bra|call}}
// PTX: st.global.b32 [%rd{{[0-9]+}}], %r[[LAST]];
// PTX-NEXT: $L__BB0_[[EXIT]]:
// PTX-NEXT: ret;

// The quotient recomputes exp(x - max) (no stored exponentials), one
// element per thread.
// PTX-LABEL: gpu.binary @_grove_mlp_probs_k2_map [
// PTX-NOT: call
// PTX: sub.rn.f32
// PTX: ex2.approx
// PTX: div.rn.f32
// PTX-NOT: call
// PTX: st.global.b32
// PTX: ret;

// Fully lowered: only LLVM-dialect host code, gpu.launch_func (translated
// with the binary) and the binaries; no host buffer (malloc/free) anywhere.
// CLEAN-NOT: gpu.module
// CLEAN-NOT: gpu.launch blocks
// CLEAN-NOT: gpu.alloc
// CLEAN-NOT: gpu.dealloc
// CLEAN-NOT: gpu.memcpy
// CLEAN-NOT: gpu.wait
// CLEAN-NOT: memref.
// CLEAN-NOT: linalg.
// CLEAN-NOT: affine.
// CLEAN-NOT: scf.
// CLEAN-NOT: cf.
// CLEAN-NOT: arith.
// CLEAN-NOT: math.
// CLEAN-NOT: func.func
// CLEAN-NOT: unrealized_conversion_cast
// CLEAN-NOT: grove_rt_matmul_f32
// CLEAN-NOT: @malloc
// CLEAN-NOT: @free

// The chip option reaches the NVVM target of every kernel module and ptxas'
// target.
// SM80-NOT: sm_90
// SM80-COUNT-6: gpu.binary @{{[a-z_0-9]+}} [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">
// SM80-NOT: sm_90
// SM80: .target sm_80
// SM80-NOT: sm_90

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

  func.func @probs(%x: tensor<?x10xf32> {grove.name = "x"})
      -> (tensor<?x10xf32> {grove.name = "p"},
          tensor<?xf32> {grove.name = "row_max"}) {
    %p = grove.softmax %x {axis = 1 : i64} : tensor<?x10xf32>
    %m = grove.reduce_max %x {axes = array<i64: 1>}
        : tensor<?x10xf32> -> tensor<?xf32>
    return %p, %m : tensor<?x10xf32>, tensor<?xf32>
  }
}

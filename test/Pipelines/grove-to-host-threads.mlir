// RUN: grove-opt %s -split-input-file --grove-to-host | FileCheck %s
// RUN: grove-opt %s -split-input-file --grove-to-host | FileCheck %s --check-prefix=CALLS
// RUN: grove-opt %s -split-input-file --grove-to-host="threads=true" | FileCheck %s --check-prefix=CALLS
// RUN: grove-opt %s -split-input-file --grove-to-host | FileCheck %s --check-prefix=CLEAN
// RUN: grove-opt %s -split-input-file --grove-to-host="threads=false" | FileCheck %s --check-prefix=NOTHREADS
// RUN: grove-opt %s -split-input-file --grove-to-host | mlir-translate --mlir-to-llvmir -split-input-file | FileCheck %s --check-prefix=LLVMIR

// Multithreaded host loops through grove-to-host (Pipelines.cpp, option
// threads, on by default): grove-outline-parallel-loops after the linalg ops
// have become parallel loops, grove-dispatch-parallel-calls after the LLVM
// lowering. A large elementwise op runs on the runtime's thread team
// through grove_rt_parallel_for and a generated thunk; a tiny one stays an
// inline loop nest; a dynamic batch is dispatched whatever its size.
// threads=false leaves every loop inline. Either way the innermost loop of
// an elementwise op is a parallel loop to LLVM: grove-host-loop-hints and
// grove-host-loop-metadata give its back edge a loop annotation (unroll
// disabled, an access group in parallelAccesses) and its loads and stores
// that access group, which become !llvm.loop and !llvm.access.group
// metadata. The passes themselves are checked in test/Codegen/LLVMCPU.

// relu over 256 x 1024: grove-collapse-loop-dims makes it one loop over the
// 262144 contiguous elements, which is the linear range (work 1 per
// iteration). The captures (the exploded input and output descriptors) go
// into a stack struct allocated in the entry block.
// CHECK-DAG: #[[$GROUP:access_group[0-9]*]] = #llvm.access_group<id = distinct[{{[0-9]+}}]<>>
// CHECK-DAG: #[[$UNROLL:loop_unroll[0-9]*]] = #llvm.loop_unroll<disable = true>
// CHECK-DAG: #[[$ANN:loop_annotation[0-9]*]] = #llvm.loop_annotation<unroll = #[[$UNROLL]], parallelAccesses = #[[$GROUP]]>
// CHECK-LABEL: module @big
// CHECK: llvm.mlir.global internal constant @_grove_big_relu__parallel_0__name("grove-to-host-threads.mlir:[[@LINE+36]]:10\00")
// CHECK-LABEL: llvm.func internal @_grove_big_relu(
// CHECK-DAG: %[[CTX:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, ptr, i64, i64, i64, i64, i64, ptr, ptr, {{.*}})> : (i64) -> !llvm.ptr
// CHECK-DAG: %[[C0:.*]] = llvm.mlir.constant(0 : index) : i64
// CHECK-DAG: %[[N:.*]] = llvm.mlir.constant(262144 : index) : i64
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: llvm.store %arg0, %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK: %[[THUNK:.*]] = llvm.mlir.addressof @_grove_big_relu__parallel_0__thunk : !llvm.ptr
// CHECK-NEXT: %[[WORK:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[NA:.*]] = llvm.mlir.addressof @_grove_big_relu__parallel_0__name : !llvm.ptr
// CHECK-NEXT: %[[NAME:.*]] = llvm.getelementptr %[[NA]][0, 0]
// CHECK-NEXT: llvm.call @grove_rt_parallel_for(%[[THUNK]], %[[CTX]], %[[C0]], %[[N]], %[[WORK]], %[[NAME]]) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr) -> ()
// CHECK-NEXT: llvm.return
// The range function is the loop over [lo, hi), left to the vectorizer as a
// parallel loop: its load and store are in the access group its back edge
// lists (grove-host-loop-hints, grove-host-loop-metadata).
// CHECK-LABEL: llvm.func internal @_grove_big_relu__parallel_0(
// CHECK-SAME: %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: !llvm.ptr,
// CHECK: %[[X:.*]] = llvm.load %{{.*}} {access_groups = [#[[$GROUP]]]} : !llvm.ptr -> f32
// CHECK-NEXT: %[[Y:.*]] = llvm.intr.maximum(%[[X]], %{{.*}})
// CHECK: llvm.store %[[Y]], %{{.*}} {access_groups = [#[[$GROUP]]]} : f32, !llvm.ptr
// CHECK: llvm.br ^bb{{[0-9]+}}(%{{.*}} : i64) {loop_annotation = #[[$ANN]]}
// CHECK-NOT: llvm.br ^bb{{[0-9]+}}(%{{.*}} : i64){{$}}
// CHECK: llvm.return
// The thunk's loads are outside any loop.
// CHECK-LABEL: llvm.func internal @_grove_big_relu__parallel_0__thunk(
// CHECK-SAME: %[[TCTX:[^:]*]]: !llvm.ptr, %[[TLO:[^:]*]]: i64, %[[THI:[^:]*]]: i64) {
// CHECK-NOT: access_groups
// CHECK: llvm.load
// CHECK-NOT: access_groups
// CHECK: llvm.call @_grove_big_relu__parallel_0(%[[TLO]], %[[THI]],
// CHECK-NEXT: llvm.return
// CHECK: llvm.func @grove_rt_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr)
// CHECK: llvm.func @big_relu(
module @big {
  func.func @relu(%x: tensor<256x1024xf32> {grove.name = "x"}) -> (tensor<256x1024xf32> {grove.name = "y"}) {
    %y = grove.relu %x : tensor<256x1024xf32>
    return %y : tensor<256x1024xf32>
  }
}

// -----

// 32 elements: far below min-work, nothing is outlined and the module does
// not even declare the runtime service.
// CHECK-LABEL: module @tiny
// CHECK-NOT: grove_rt_parallel_for
// CHECK-NOT: __parallel_
// CHECK-NOT: __thunk
// CHECK: llvm.intr.maximum
// CHECK-NOT: grove_rt_parallel_for
// CHECK-NOT: __parallel_
// CHECK-NOT: __thunk
// CHECK: llvm.func @tiny_relu(
module @tiny {
  func.func @relu(%x: tensor<4x8xf32> {grove.name = "x"}) -> (tensor<4x8xf32> {grove.name = "y"}) {
    %y = grove.relu %x : tensor<4x8xf32>
    return %y : tensor<4x8xf32>
  }
}

// -----

// A dynamic number of rows: dispatched whatever it turns out to be, over
// [0, rows) with the rows read from the input's descriptor (%arg3).
// CHECK-LABEL: module @dyn
// CHECK: llvm.mlir.global internal constant @_grove_dyn_add__parallel_0__name("grove-to-host-threads.mlir:[[@LINE+11]]:10\00")
// CHECK-LABEL: llvm.func internal @_grove_dyn_add(
// CHECK: %[[THUNK:.*]] = llvm.mlir.addressof @_grove_dyn_add__parallel_0__thunk : !llvm.ptr
// CHECK-NEXT: %[[WORK:.*]] = llvm.mlir.constant(1024 : i64) : i64
// CHECK-NEXT: llvm.mlir.addressof @_grove_dyn_add__parallel_0__name
// CHECK-NEXT: %[[NAME:.*]] = llvm.getelementptr
// CHECK-NEXT: llvm.call @grove_rt_parallel_for(%[[THUNK]], %{{.*}}, %{{.*}}, %{{.*}}, %[[WORK]], %[[NAME]])
// CHECK: llvm.func internal @_grove_dyn_add__parallel_0__thunk(
// CHECK: llvm.func @grove_rt_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr)
module @dyn {
  func.func @add(%x: tensor<?x1024xf32> {grove.name = "x"}, %b: tensor<1024xf32> {grove.name = "b"}) -> (tensor<?x1024xf32> {grove.name = "y"}) {
    %y = grove.add %x, %b : (tensor<?x1024xf32>, tensor<1024xf32>) -> tensor<?x1024xf32>
    return %y : tensor<?x1024xf32>
  }
}

// One dispatched call in @big, none in @tiny, one in @dyn.
// CALLS-LABEL: module @big
// CALLS-COUNT-1: llvm.call @grove_rt_parallel_for(
// CALLS-NOT: llvm.call @grove_rt_parallel_for(
// CALLS-LABEL: module @tiny
// CALLS-NOT: grove_rt_parallel_for
// CALLS-LABEL: module @dyn
// CALLS-COUNT-1: llvm.call @grove_rt_parallel_for(
// CALLS-NOT: llvm.call @grove_rt_parallel_for(

// The marker attribute is consumed; everything is LLVM dialect, and the
// loop hints are branch properties, not discardable attributes any more.
// CLEAN-NOT: grove.parallel_body
// CLEAN-NOT: func.func
// CLEAN-NOT: func.call
// CLEAN-NOT: scf.
// CLEAN-NOT: unrealized_conversion_cast
// CLEAN-NOT: {llvm.loop_annotation =
// CLEAN: module @dyn
// CLEAN-NOT: grove.parallel_body
// CLEAN-NOT: func.func
// CLEAN-NOT: func.call
// CLEAN-NOT: scf.
// CLEAN-NOT: unrealized_conversion_cast
// CLEAN-NOT: {llvm.loop_annotation =

// threads=false: the same loops, inline, in the entry functions.
// NOTHREADS-NOT: grove_rt_parallel_for
// NOTHREADS-NOT: __parallel_
// NOTHREADS-NOT: __thunk
// NOTHREADS-NOT: grove.parallel_body
// NOTHREADS-LABEL: llvm.func internal @_grove_big_relu(
// NOTHREADS: llvm.load %{{.*}} {access_groups = [#[[G:access_group[0-9]*]]]} : !llvm.ptr -> f32
// NOTHREADS-NEXT: llvm.intr.maximum
// NOTHREADS: llvm.store %{{.*}}, %{{.*}} {access_groups = [#[[G]]]} : f32, !llvm.ptr
// NOTHREADS: llvm.br {{.*}} {loop_annotation = #{{.*}}}
// NOTHREADS-LABEL: llvm.func internal @_grove_tiny_relu(
// NOTHREADS: llvm.intr.maximum
// NOTHREADS-LABEL: llvm.func internal @_grove_dyn_add(
// NOTHREADS: llvm.fadd
// NOTHREADS-NOT: grove_rt_parallel_for
// NOTHREADS-NOT: __parallel_
// NOTHREADS-NOT: __thunk
// NOTHREADS: llvm.func @dyn_add(

// In LLVM IR: the row loop's accesses carry !llvm.access.group, its back
// edge !llvm.loop with llvm.loop.parallel_accesses listing that group.
// LLVMIR-LABEL: define internal void @_grove_big_relu__parallel_0(
// LLVMIR: load float, ptr %{{.*}}, align 4, !llvm.access.group ![[G:[0-9]+]]
// LLVMIR: store float %{{.*}}, ptr %{{.*}}, align 4, !llvm.access.group ![[G]]
// LLVMIR: br label %{{.*}}, !llvm.loop ![[LOOP:[0-9]+]]
// LLVMIR-LABEL: define internal void @_grove_big_relu__parallel_0__thunk(
// LLVMIR-NOT: !llvm.access.group
// LLVMIR-DAG: ![[G]] = distinct !{}
// LLVMIR-DAG: ![[LOOP]] = distinct !{![[LOOP]], ![[UNROLL:[0-9]+]], ![[PA:[0-9]+]]}
// LLVMIR-DAG: ![[UNROLL]] = !{!"llvm.loop.unroll.disable"}
// LLVMIR-DAG: ![[PA]] = !{!"llvm.loop.parallel_accesses", ![[G]]}
// LLVMIR: ; ModuleID

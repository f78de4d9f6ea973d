// RUN: grove-opt %s -split-input-file --grove-to-host | FileCheck %s
// RUN: grove-opt %s -split-input-file --grove-to-host | FileCheck %s --check-prefix=CLEAN

// grove-emit-entry-points (EmitEntryPoints.cpp) at the end of grove-to-host:
// one param, two entry points (one result, two results). Diagnostics are in
// emit-entry-points-invalid.mlir.

// The ABI attributes are consumed, and nothing is left half converted.
// CLEAN-NOT: grove.abi
// CLEAN-NOT: grove.name
// CLEAN-NOT: grove.param
// CLEAN-NOT: unrealized_conversion_cast
// CLEAN-NOT: func.func

// CHECK-LABEL: module @tiny {
// Everything lowered from the user's functions is internal; external
// declarations stay external.
// CHECK: llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
// CHECK: llvm.func internal @_grove_tiny_scale(
// CHECK: llvm.func internal @_mlir_ciface__grove_tiny_scale(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK: llvm.func internal @_grove_tiny_pair(
// CHECK: llvm.func internal @_mlir_ciface__grove_tiny_pair(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK: llvm.func @grove_rt_invoke(!llvm.ptr, !llvm.ptr, i32, !llvm.ptr) -> i32

// Packed: args = [the state it reads, inputs..., result buffer]; the
// ciface wrapper takes the result buffer first.
// CHECK-LABEL: llvm.func internal @_grove.tiny.scale.packed(
// CHECK-SAME: %[[ARGS:.*]]: !llvm.ptr) {
// CHECK-NEXT: %[[S2:.*]] = llvm.getelementptr %[[ARGS]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[RES:.*]] = llvm.load %[[S2]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[S0:.*]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[W:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[S1:.*]] = llvm.getelementptr %[[ARGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[X:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: llvm.call @_mlir_ciface__grove_tiny_scale(%[[RES]], %[[W]], %[[X]]) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT: llvm.return

// Two results still take one result buffer, after the param and the two
// inputs.
// CHECK-LABEL: llvm.func internal @_grove.tiny.pair.packed(
// CHECK-SAME: %[[ARGS:.*]]: !llvm.ptr) {
// CHECK-NEXT: %[[S3:.*]] = llvm.getelementptr %[[ARGS]][3]
// CHECK-NEXT: %[[RES:.*]] = llvm.load %[[S3]]
// CHECK-NEXT: %[[S0:.*]] = llvm.getelementptr %[[ARGS]][0]
// CHECK-NEXT: %[[W:.*]] = llvm.load %[[S0]]
// CHECK-NEXT: %[[S1:.*]] = llvm.getelementptr %[[ARGS]][1]
// CHECK-NEXT: %[[A:.*]] = llvm.load %[[S1]]
// CHECK-NEXT: %[[S2:.*]] = llvm.getelementptr %[[ARGS]][2]
// CHECK-NEXT: %[[B:.*]] = llvm.load %[[S2]]
// CHECK-NEXT: llvm.call @_mlir_ciface__grove_tiny_pair(%[[RES]], %[[W]], %[[A]], %[[B]])
// CHECK-NEXT: llvm.return

// CHECK: llvm.mlir.global internal constant @_grove.tiny.name("tiny\00")
// CHECK: llvm.mlir.global internal constant @_grove.tiny.desc("{\22format\22:\22grove-model\22,\22version\22:7,\22module\22:\22tiny\22,\22target\22:\22host\22,\0A\22state\22:[\0A{\22name\22:\22w\22,\22dtype\22:\22f32\22,\22shape\22:[4]}],\0A\22entries\22:[\0A{\22name\22:\22scale\22,\22args\22:[\0A{\22state\22:\22w\22,\22access\22:\22read\22},\0A{\22input\22:0}],\0A\22inputs\22:[\0A{\22name\22:\22x\22,\22dtype\22:\22f32\22,\22shape\22:[-1,4]}],\0A\22outputs\22:[\0A{\22name\22:\22y\22,\22dtype\22:\22f32\22,\22shape\22:[-1,4]}]},\0A{\22name\22:\22pair\22,\22args\22:[\0A{\22state\22:\22w\22,\22access\22:\22read\22},\0A{\22input\22:0},\0A{\22input\22:1}],\0A\22inputs\22:[\0A{\22name\22:\22arg0\22,\22dtype\22:\22f32\22,\22shape\22:[4]},\0A{\22name\22:\22arg1\22,\22dtype\22:\22f32\22,\22shape\22:[4]}],\0A\22outputs\22:[\0A{\22name\22:\22out0\22,\22dtype\22:\22f32\22,\22shape\22:[4]},\0A{\22name\22:\22out1\22,\22dtype\22:\22f32\22,\22shape\22:[4]}]}]}\0A\00") {addr_space = 0 : i32, section = "grove_models"}

// The entry table, in descriptor order.
// CHECK-LABEL: llvm.mlir.global internal constant @_grove.tiny.entries() {{.*}} : !llvm.array<2 x ptr> {
// CHECK-NEXT: %[[T0:.*]] = llvm.mlir.undef : !llvm.array<2 x ptr>
// CHECK-NEXT: %[[P0:.*]] = llvm.mlir.addressof @_grove.tiny.scale.packed : !llvm.ptr
// CHECK-NEXT: %[[T1:.*]] = llvm.insertvalue %[[P0]], %[[T0]][0]
// CHECK-NEXT: %[[P1:.*]] = llvm.mlir.addressof @_grove.tiny.pair.packed : !llvm.ptr
// CHECK-NEXT: %[[T2:.*]] = llvm.insertvalue %[[P1]], %[[T1]][1]
// CHECK-NEXT: llvm.return %[[T2]]

// grove_model_def: {abi_version = 11, num_entries = 2, name, descriptor,
// entries}, the one exported global.
// CHECK-LABEL: llvm.mlir.global external constant @tiny_model() {{.*}} : !llvm.struct<(i32, i32, ptr, ptr, ptr)> {
// CHECK-NEXT: %[[M0:.*]] = llvm.mlir.undef : !llvm.struct<(i32, i32, ptr, ptr, ptr)>
// CHECK-NEXT: %[[VERSION:.*]] = llvm.mlir.constant(11 : i32) : i32
// CHECK-NEXT: %[[M1:.*]] = llvm.insertvalue %[[VERSION]], %[[M0]][0]
// CHECK-NEXT: %[[COUNT:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[M2:.*]] = llvm.insertvalue %[[COUNT]], %[[M1]][1]
// CHECK-NEXT: %[[NAME:.*]] = llvm.mlir.addressof @_grove.tiny.name : !llvm.ptr
// CHECK-NEXT: %[[M3:.*]] = llvm.insertvalue %[[NAME]], %[[M2]][2]
// CHECK-NEXT: %[[DESC:.*]] = llvm.mlir.addressof @_grove.tiny.desc : !llvm.ptr
// CHECK-NEXT: %[[M4:.*]] = llvm.insertvalue %[[DESC]], %[[M3]][3]
// CHECK-NEXT: %[[TABLE:.*]] = llvm.mlir.addressof @_grove.tiny.entries : !llvm.ptr
// CHECK-NEXT: %[[M5:.*]] = llvm.insertvalue %[[TABLE]], %[[M4]][4]
// CHECK-NEXT: llvm.return %[[M5]]

// Typed entry points: (ctx, inputs..., outputs...) -> status, forwarding the
// tensors in an array to grove_rt_invoke with the entry index.
// CHECK-LABEL: llvm.func @tiny_scale(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[IN:.*]]: !llvm.ptr, %[[OUT:.*]]: !llvm.ptr) -> i32 {
// CHECK-NEXT: %[[N:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT: %[[ARR:.*]] = llvm.alloca %[[N]] x !llvm.ptr : (i64) -> !llvm.ptr
// CHECK-NEXT: %[[E0:.*]] = llvm.getelementptr %[[ARR]][0]
// CHECK-NEXT: llvm.store %[[IN]], %[[E0]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[E1:.*]] = llvm.getelementptr %[[ARR]][1]
// CHECK-NEXT: llvm.store %[[OUT]], %[[E1]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[MODEL:.*]] = llvm.mlir.addressof @tiny_model : !llvm.ptr
// CHECK-NEXT: %[[INDEX:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[STATUS:.*]] = llvm.call @grove_rt_invoke(%[[CTX]], %[[MODEL]], %[[INDEX]], %[[ARR]]) : (!llvm.ptr, !llvm.ptr, i32, !llvm.ptr) -> i32
// CHECK-NEXT: llvm.return %[[STATUS]] : i32

// CHECK-LABEL: llvm.func @tiny_pair(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[A:.*]]: !llvm.ptr, %[[B:.*]]: !llvm.ptr, %[[O0:.*]]: !llvm.ptr, %[[O1:.*]]: !llvm.ptr) -> i32 {
// CHECK-NEXT: %[[N:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-NEXT: %[[ARR:.*]] = llvm.alloca %[[N]] x !llvm.ptr
// CHECK: llvm.store %[[A]],
// CHECK: llvm.store %[[B]],
// CHECK: llvm.store %[[O0]],
// CHECK: llvm.store %[[O1]],
// CHECK: %[[MODEL:.*]] = llvm.mlir.addressof @tiny_model : !llvm.ptr
// CHECK-NEXT: %[[INDEX:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[STATUS:.*]] = llvm.call @grove_rt_invoke(%[[CTX]], %[[MODEL]], %[[INDEX]], %[[ARR]])
// CHECK-NEXT: llvm.return %[[STATUS]] : i32
// CHECK-NOT: llvm.func
module @tiny {
  grove.param @w : tensor<4xf32>
  func.func @scale(%x: tensor<?x4xf32> {grove.name = "x"}) -> (tensor<?x4xf32> {grove.name = "y"}) {
    %w = grove.get_param @w : tensor<4xf32>
    %0 = grove.mul %x, %w : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
    return %0 : tensor<?x4xf32>
  }
  func.func @pair(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %w = grove.get_param @w : tensor<4xf32>
    %0 = grove.add %a, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %1 = grove.sub %b, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %0, %1 : tensor<4xf32>, tensor<4xf32>
  }
}

// -----

// No inputs and no results: the packed function still passes the state it
// writes, and the typed one allocates a one-slot array it never fills. An
// entry that touches no state gets none. A rank-0 result is one result.
// CHECK-LABEL: module @edge {
// CHECK-LABEL: llvm.func internal @_grove.edge.reset.packed(
// CHECK-SAME: %[[ARGS:.*]]: !llvm.ptr) {
// CHECK-NEXT: %[[S0:.*]] = llvm.getelementptr %[[ARGS]][0]
// CHECK-NEXT: %[[W:.*]] = llvm.load %[[S0]]
// CHECK-NEXT: llvm.call @_mlir_ciface__grove_edge_reset(%[[W]]) : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.return
// CHECK-LABEL: llvm.func internal @_grove.edge.total.packed(
// CHECK-SAME: %[[ARGS:.*]]: !llvm.ptr) {
// CHECK-NEXT: %[[S1:.*]] = llvm.getelementptr %[[ARGS]][1]
// CHECK-NEXT: %[[RES:.*]] = llvm.load %[[S1]]
// CHECK: llvm.call @_mlir_ciface__grove_edge_total(%[[RES]], %{{.*}}) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK: @_grove.edge.desc("{\22format\22:\22grove-model\22,\22version\22:7,\22module\22:\22edge\22,\22target\22:\22host\22,\0A\22state\22:[\0A{\22name\22:\22w\22,\22dtype\22:\22f32\22,\22shape\22:[4],\22init\22:\220x00000000\22}],\0A\22entries\22:[\0A{\22name\22:\22reset\22,\22args\22:[\0A{\22state\22:\22w\22,\22access\22:\22write\22}],\0A\22inputs\22:[],\0A\22outputs\22:[]},\0A{\22name\22:\22total\22,\22args\22:[\0A{\22input\22:0}],\0A\22inputs\22:[\0A{\22name\22:\22arg0\22,\22dtype\22:\22f32\22,\22shape\22:[4]}],\0A\22outputs\22:[\0A{\22name\22:\22out0\22,\22dtype\22:\22f32\22,\22shape\22:[]}]}]}\0A\00") {addr_space = 0 : i32, section = "grove_models"}
// CHECK-LABEL: llvm.func @edge_reset(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr) -> i32 {
// CHECK-NEXT: %[[N:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[ARR:.*]] = llvm.alloca %[[N]] x !llvm.ptr
// CHECK-NEXT: %[[MODEL:.*]] = llvm.mlir.addressof @edge_model
// CHECK-NEXT: %[[INDEX:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: llvm.call @grove_rt_invoke(%[[CTX]], %[[MODEL]], %[[INDEX]], %[[ARR]])
// CHECK-LABEL: llvm.func @edge_total(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) -> i32 {
// CHECK: llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: llvm.call @grove_rt_invoke(
module @edge {
  grove.param @w : tensor<4xf32> = 0.0 : f32
  func.func @reset() {
    %z = grove.constant dense<0.0> : tensor<4xf32>
    grove.set_param @w = %z : tensor<4xf32>
    return
  }
  func.func @total(%x: tensor<4xf32>) -> tensor<f32> {
    %0 = grove.reduce_sum %x {axes = array<i64: 0>} : tensor<4xf32> -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// RUN: grove-opt %s --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s

// The collectives bufferize to one runtime service call each
// (BufferizableOpInterfaceImpl.cpp) on contiguous rank-1 views: an
// identity-layout buffer is collapsed, a strided one is copied into a new
// buffer first and, for the in-place collectives, copied back.

// CHECK-LABEL: func.func @contiguous
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32
// CHECK: %[[A:.*]] = memref.alloc() {{.*}} : memref<4x8xf32>
// CHECK: memref.copy %[[X]], %[[A]]
// CHECK: %[[F:.*]] = memref.collapse_shape %[[A]] {{\[\[}}0, 1]] : memref<4x8xf32> into memref<32xf32>
// CHECK: %[[MEAN:.*]] = arith.constant 1 : i32
// CHECK: %[[C:.*]] = memref.cast %[[F]] : memref<32xf32> to memref<?xf32, strided<[1], offset: ?>>
// CHECK: call @grove_rt_all_reduce_f32(%[[C]], %[[MEAN]])
// CHECK: %[[N:.*]] = grove.world_size : index
// CHECK: %[[G:.*]] = memref.alloc(%[[N]]) {{.*}} : memref<?x4x8xf32>
// CHECK: %[[GF:.*]] = memref.collapse_shape %[[G]] {{\[\[}}0, 1, 2]] : memref<?x4x8xf32> into memref<?xf32>
// CHECK: call @grove_rt_all_gather_f32(%{{.*}}, %{{.*}})
// CHECK: %[[ROOT:.*]] = arith.constant 2 : i32
// CHECK: call @grove_rt_broadcast_f32(%{{.*}}, %[[ROOT]])
// CHECK: call @grove_rt_all_reduce_i32(
func.func @contiguous(%x: tensor<4x8xf32> {bufferization.writable = false},
                      %i: tensor<6xi32> {bufferization.writable = false})
    -> (tensor<4x8xf32>, tensor<?x4x8xf32>, tensor<4x8xf32>, tensor<6xi32>) {
  %a = grove.all_reduce mean %x : tensor<4x8xf32>
  %g = grove.all_gather %a : (tensor<4x8xf32>) -> tensor<?x4x8xf32>
  %b = grove.broadcast %a {root = 2} : tensor<4x8xf32>
  %s = grove.all_reduce sum %i : tensor<6xi32>
  return %a, %g, %b, %s : tensor<4x8xf32>, tensor<?x4x8xf32>, tensor<4x8xf32>, tensor<6xi32>
}

// CHECK-LABEL: func.func @strided
// CHECK: %[[V:.*]] = memref.subview
// CHECK: %[[T:.*]] = memref.alloc() {{.*}} : memref<4x8xf64>
// CHECK: memref.copy %[[V]], %[[T]]
// CHECK: memref.collapse_shape %[[T]]
// CHECK: call @grove_rt_all_reduce_f64(
// CHECK: memref.copy %[[T]], %[[V]]
func.func @strided(%y: tensor<16x8xf64>) -> tensor<16x8xf64> {
  %s = tensor.extract_slice %y[0, 0] [4, 8] [2, 1] : tensor<16x8xf64> to tensor<4x8xf64>
  %c = grove.all_reduce sum %s : tensor<4x8xf64>
  %r = tensor.insert_slice %c into %y[0, 0] [4, 8] [2, 1] : tensor<4x8xf64> into tensor<16x8xf64>
  return %r : tensor<16x8xf64>
}

// A rank-0 tensor is a one-element buffer.
// CHECK-LABEL: func.func @scalar
// CHECK: memref.expand_shape %{{.*}} [] output_shape [1] : memref<f32> into memref<1xf32>
// CHECK: call @grove_rt_all_reduce_f32(
func.func @scalar(%x: tensor<f32>) -> tensor<f32> {
  %a = grove.all_reduce mean %x : tensor<f32>
  return %a : tensor<f32>
}

// top-k writes two new buffers through one call.
// CHECK-LABEL: func.func @topk
// CHECK-DAG: %[[V:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK-DAG: %[[I:.*]] = memref.alloc() {{.*}} : memref<4xi32>
// CHECK: call @grove_rt_top_k_f32(%{{.*}}, %{{.*}}, %{{.*}}) : (memref<?xf32, strided<[1], offset: ?>>, memref<?xf32, strided<[1], offset: ?>>, memref<?xi32, strided<[1], offset: ?>>) -> ()
func.func @topk(%x: tensor<40xf32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %v, %i = grove.top_k %x {k = 4} : tensor<40xf32> -> (tensor<4xf32>, tensor<4xi32>)
  return %v, %i : tensor<4xf32>, tensor<4xi32>
}

// A started all-reduce reads its operand, which the runtime copies (the
// buffer may be reused at once), and returns the runtime's i64 handle; the
// wait writes the result into a new buffer.
// CHECK-LABEL: func.func @started
// CHECK-SAME: (%[[X:.*]]: memref<2x4xf32
// CHECK: %[[F:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1]] : memref<2x4xf32> into memref<8xf32>
// CHECK: %[[C:.*]] = memref.cast %[[F]]
// CHECK: %[[H:.*]] = call @grove_rt_all_reduce_start_f32(%[[C]], %{{.*}}) : (memref<?xf32, strided<[1], offset: ?>>, i32) -> i64
// CHECK: %[[R:.*]] = builtin.unrealized_conversion_cast %[[H]] : i64 to !grove.collective_request
// CHECK: %[[OUT:.*]] = memref.alloc() {{.*}} : memref<2x4xf32>
// CHECK: %[[H2:.*]] = builtin.unrealized_conversion_cast %[[R]] : !grove.collective_request to i64
// CHECK: call @grove_rt_collective_wait_f32(%[[H2]], %{{.*}}) : (i64, memref<?xf32, strided<[1], offset: ?>>) -> ()
// CHECK: return %[[OUT]]
func.func @started(%x: tensor<2x4xf32> {bufferization.writable = false})
    -> tensor<2x4xf32> {
  %r = grove.all_reduce_start mean %x : tensor<2x4xf32>
  %w = grove.collective_wait %r : tensor<2x4xf32>
  return %w : tensor<2x4xf32>
}

// A started all-gather's wait allocates one input per rank of the world
// the call runs in.
// CHECK-LABEL: func.func @gather_started
// CHECK: %[[H:.*]] = call @grove_rt_all_gather_start_i32(%{{.*}}) : (memref<?xi32, strided<[1], offset: ?>>) -> i64
// CHECK: %[[N:.*]] = grove.world_size : index
// CHECK: %[[OUT:.*]] = memref.alloc(%[[N]]) {{.*}} : memref<?x4xi32>
// CHECK: call @grove_rt_collective_wait_i32(%{{.*}}, %{{.*}}) : (i64, memref<?xi32, strided<[1], offset: ?>>) -> ()
func.func @gather_started(%x: tensor<4xi32> {bufferization.writable = false})
    -> tensor<?x4xi32> {
  %r = grove.all_gather_start %x : tensor<4xi32>
  %w = grove.collective_wait %r : tensor<?x4xi32>
  return %w : tensor<?x4xi32>
}

// grove.group_by_index: the order (one per index, dynamic) and the offsets
// (num_groups + 1) are new buffers one call of grove_rt_group_by_index
// writes.
// CHECK-LABEL: func.func @group
// CHECK-SAME: (%[[IDS:.*]]: memref<?xi32
// CHECK: %[[N:.*]] = memref.dim %[[IDS]], %{{.*}}
// CHECK-DAG: %[[O:.*]] = memref.alloc(%[[N]]) {{.*}} : memref<?xi32>
// CHECK-DAG: %[[OFF:.*]] = memref.alloc() {{.*}} : memref<9xi32>
// CHECK: call @grove_rt_group_by_index(%{{.*}}, %{{.*}}, %{{.*}}) : (memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>) -> ()
func.func @group(%ids: tensor<?xi32>) -> (tensor<?xi32>, tensor<9xi32>) {
  %o, %off = grove.group_by_index %ids {num_groups = 8} : tensor<?xi32> -> (tensor<?xi32>, tensor<9xi32>)
  return %o, %off : tensor<?xi32>, tensor<9xi32>
}

// The services, declared once each.
// CHECK-DAG: func.func private @grove_rt_all_reduce_f32(memref<?xf32, strided<[1], offset: ?>>, i32) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @grove_rt_all_gather_f32(memref<?xf32, strided<[1], offset: ?>>, memref<?xf32, strided<[1], offset: ?>>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @grove_rt_all_reduce_start_f32(memref<?xf32, strided<[1], offset: ?>>, i32) -> i64 attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @grove_rt_collective_wait_f32(i64, memref<?xf32, strided<[1], offset: ?>>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @grove_rt_group_by_index(memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>) attributes {llvm.emit_c_interface}

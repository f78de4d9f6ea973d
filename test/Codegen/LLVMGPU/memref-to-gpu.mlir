// RUN: grove-opt %s -split-input-file --grove-memref-to-gpu | FileCheck %s

// grove-memref-to-gpu (MemRefToGPU.cpp): after deallocation every heap
// buffer lives on the device (but the tree schedule's group table, which the
// host reads). What it rejects is in memref-to-gpu-invalid.mlir.

// Static and dynamic allocations become (synchronous) device allocations,
// deallocations device frees; the `alignment` bufferization asked for is
// dropped (device blocks are 256-byte aligned).
// CHECK-LABEL: func.func @alloc_dealloc
// CHECK-SAME: (%[[N:.*]]: index)
// CHECK-NEXT: %[[A:.*]] = gpu.alloc () : memref<4x8xf32>
// CHECK-NEXT: %[[B:.*]] = gpu.alloc (%[[N]]) : memref<?x8xf32>
// CHECK-NEXT: gpu.dealloc %[[A]] : memref<4x8xf32>
// CHECK-NEXT: return %[[B]] : memref<?x8xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
func.func @alloc_dealloc(%n: index) -> memref<?x8xf32> {
  %a = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  %b = memref.alloc(%n) {alignment = 64 : i64} : memref<?x8xf32>
  memref.dealloc %a : memref<4x8xf32>
  return %b : memref<?x8xf32>
}

// -----

// A contiguous copy is a gpu.memcpy (target first), static or dynamic.
// CHECK-LABEL: func.func @contiguous_copy
// CHECK-SAME: (%[[X:.*]]: memref<?x8xf32>, %[[G:.*]]: memref<2xf32>, %[[N:.*]]: index)
// CHECK-NEXT: %[[B:.*]] = gpu.alloc (%[[N]]) : memref<?x8xf32>
// CHECK-NEXT: gpu.memcpy %[[B]], %[[X]] : memref<?x8xf32>, memref<?x8xf32>
// CHECK-NEXT: %[[C:.*]] = gpu.alloc () : memref<2xf32>
// CHECK-NEXT: gpu.memcpy %[[C]], %[[G]] : memref<2xf32>, memref<2xf32>
// CHECK-NOT: memref.copy
// CHECK: return
func.func @contiguous_copy(%x: memref<?x8xf32>, %g: memref<2xf32>, %n: index) -> (memref<?x8xf32>, memref<2xf32>) {
  %b = memref.alloc(%n) : memref<?x8xf32>
  memref.copy %x, %b : memref<?x8xf32> to memref<?x8xf32>
  %c = memref.alloc() : memref<2xf32>
  memref.copy %g, %c : memref<2xf32> to memref<2xf32>
  return %b, %c : memref<?x8xf32>, memref<2xf32>
}

// -----

// Stack buffers (deallocation's ownership flags) stay on the host, and the
// ops that only read metadata are untouched.
// CHECK-LABEL: func.func @alloca_untouched
// CHECK-SAME: (%[[X:.*]]: memref<?x8xf32>)
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[FLAGS:.*]] = memref.alloca() : memref<2xi1>
// CHECK-NEXT: %[[D:.*]] = memref.dim %[[X]], %[[C0]] : memref<?x8xf32>
// CHECK-NEXT: %[[B:.*]] = gpu.alloc (%[[D]]) : memref<?x8xf32>
// CHECK-NEXT: %[[V:.*]] = memref.subview %[[B]][0, 0] [%[[D]], 4] [1, 1]
// CHECK-NEXT: gpu.dealloc %[[B]] : memref<?x8xf32>
// CHECK-NEXT: return %[[FLAGS]] : memref<2xi1>
// CHECK-NOT: gpu.alloc
func.func @alloca_untouched(%x: memref<?x8xf32>) -> memref<2xi1> {
  %c0 = arith.constant 0 : index
  %flags = memref.alloca() : memref<2xi1>
  %d = memref.dim %x, %c0 : memref<?x8xf32>
  %b = memref.alloc(%d) : memref<?x8xf32>
  %v = memref.subview %b[0, 0] [%d, 4] [1, 1] : memref<?x8xf32> to memref<?x4xf32, strided<[8, 1]>>
  memref.dealloc %b : memref<?x8xf32>
  return %flags : memref<2xi1>
}

// -----

// Buffers a kernel uses are passed into the launch unchanged.
// CHECK-LABEL: func.func @with_launch
// CHECK: %[[B:.*]] = gpu.alloc () : memref<16xf32>
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[B]][%{{.*}}] : memref<16xf32>
// CHECK: gpu.terminator
// CHECK: gpu.dealloc %[[B]] : memref<16xf32>
func.func @with_launch() {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.alloc() : memref<16xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    memref.store %zero, %b[%tx] : memref<16xf32>
    gpu.terminator
  }
  memref.dealloc %b : memref<16xf32>
  return
}

// -----

// The tree schedule service goes to its CUDA twin, declared at the end of
// the module with the same type; the group table (operand 7, through its
// cast) stays a host buffer, freed on the host (also through its base
// buffer, as lowered deallocations do), and the host loop reads it; every
// other buffer is a device buffer.
// CHECK-LABEL: func.func @tree_schedule
// CHECK-SAME: (%[[OFF:.*]]: memref<?xi32>, %[[N:.*]]: index)
// CHECK: %[[ORDER:.*]] = gpu.alloc (%[[N]]) : memref<?xi32>
// CHECK: %[[GROUPS:.*]] = memref.alloc(%[[N]]) : memref<?x4xi32>
// CHECK: %[[CAST:.*]] = memref.cast %[[GROUPS]]
// CHECK: %[[COUNT:.*]] = call @grove_rt_cuda_tree_schedule(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %[[CAST]], %{{[^,]*}},
// CHECK: scf.for
// CHECK: memref.load %[[GROUPS]][%{{.*}}, %{{.*}}] : memref<?x4xi32>
// CHECK: %[[BASE:[^,]*]], %{{.*}} = memref.extract_strided_metadata %[[GROUPS]]
// CHECK: memref.dealloc %[[BASE]] : memref<i32>
// CHECK: gpu.dealloc %[[ORDER]] : memref<?xi32>
// CHECK-NOT: @grove_rt_tree_schedule(
// CHECK: func.func private @grove_rt_cuda_tree_schedule
// CHECK-SAME: attributes {llvm.emit_c_interface}
func.func private @grove_rt_tree_schedule(memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>, i32, i32, memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>, memref<?x?xi32, strided<[?, ?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>) -> i64 attributes {llvm.emit_c_interface}
func.func @tree_schedule(%off: memref<?xi32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %order = memref.alloc(%n) : memref<?xi32>
  %groups = memref.alloc(%n) : memref<?x4xi32>
  %l = memref.cast %order : memref<?xi32> to memref<?xi32, strided<[?], offset: ?>>
  %o = memref.cast %off : memref<?xi32> to memref<?xi32, strided<[?], offset: ?>>
  %g = memref.cast %groups : memref<?x4xi32> to memref<?x?xi32, strided<[?, ?], offset: ?>>
  %count = call @grove_rt_tree_schedule(%o, %o, %o, %c0_i32, %c0_i32, %l, %l, %g, %l, %l, %l, %l, %l, %l) : (memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>, i32, i32, memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>, memref<?x?xi32, strided<[?, ?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>) -> i64
  %groupCount = arith.index_cast %count : i64 to index
  scf.for %i = %c0 to %groupCount step %c1 {
    %first = memref.load %groups[%i, %c0] : memref<?x4xi32>
  }
  %base, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %groups : memref<?x4xi32> -> memref<i32>, index, index, index, index, index
  memref.dealloc %base : memref<i32>
  memref.dealloc %order : memref<?xi32>
  return
}

// -----

// A host store into a device buffer (a scalar the host computed) becomes a
// one-thread kernel, numbered after the function's other kernels; stores
// into stack buffers stay.
// CHECK-LABEL: func.func @host_store
// CHECK-SAME: (%[[V:.*]]: f32)
// CHECK: %[[B:.*]] = gpu.alloc () : memref<f32>
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]]) threads({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]]) function(@host_store_k3_store)
// CHECK-NEXT: memref.store %[[V]], %[[B]][] : memref<f32>
// CHECK-NEXT: gpu.terminator
// CHECK: memref.store %{{.*}}, %{{.*}}[] : memref<i1>
// CHECK-NOT: gpu.launch
func.func @host_store(%v: f32) -> memref<f32> {
  %c1 = arith.constant 1 : index
  %true = arith.constant true
  %b = memref.alloc() : memref<f32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  } {function = @host_store_k2_map}
  memref.store %v, %b[] : memref<f32>
  %flag = memref.alloca() : memref<i1>
  memref.store %true, %flag[] : memref<i1>
  return %b : memref<f32>
}

// -----

// The collectives' services go to their device twins (NCCL), their buffers
// to the device.
// CHECK-LABEL: func.func @collectives
// CHECK: %[[B:.*]] = gpu.alloc (%{{.*}}) : memref<?xf32>
// CHECK: %[[G:.*]] = gpu.alloc (%{{.*}}) : memref<?xf16>
// CHECK: call @grove_rt_cuda_all_reduce_f32(%{{.*}}, %{{.*}})
// CHECK: call @grove_rt_cuda_broadcast_f32(%{{.*}}, %{{.*}})
// CHECK: call @grove_rt_cuda_all_gather_f16(%{{.*}}, %{{.*}})
// CHECK-NOT: call @grove_rt_all_
// CHECK-DAG: func.func private @grove_rt_cuda_all_reduce_f32(memref<?xf32, strided<[1], offset: ?>>, i32) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @grove_rt_cuda_broadcast_f32(
// CHECK-DAG: func.func private @grove_rt_cuda_all_gather_f16(
func.func private @grove_rt_all_reduce_f32(memref<?xf32, strided<[1], offset: ?>>, i32) attributes {llvm.emit_c_interface}
func.func private @grove_rt_broadcast_f32(memref<?xf32, strided<[1], offset: ?>>, i32) attributes {llvm.emit_c_interface}
func.func private @grove_rt_all_gather_f16(memref<?xf16, strided<[1], offset: ?>>, memref<?xf16, strided<[1], offset: ?>>) attributes {llvm.emit_c_interface}
func.func @collectives(%n: index, %m: index) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %b = memref.alloc(%n) : memref<?xf32>
  %h = memref.alloc(%n) : memref<?xf16>
  %g = memref.alloc(%m) : memref<?xf16>
  %v = memref.cast %b : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %hv = memref.cast %h : memref<?xf16> to memref<?xf16, strided<[1], offset: ?>>
  %gv = memref.cast %g : memref<?xf16> to memref<?xf16, strided<[1], offset: ?>>
  call @grove_rt_all_reduce_f32(%v, %c1) : (memref<?xf32, strided<[1], offset: ?>>, i32) -> ()
  call @grove_rt_broadcast_f32(%v, %c0) : (memref<?xf32, strided<[1], offset: ?>>, i32) -> ()
  call @grove_rt_all_gather_f16(%hv, %gv) : (memref<?xf16, strided<[1], offset: ?>>, memref<?xf16, strided<[1], offset: ?>>) -> ()
  memref.dealloc %b : memref<?xf32>
  memref.dealloc %h : memref<?xf16>
  memref.dealloc %g : memref<?xf16>
  return
}

// -----

// So do the split collectives' (grove-overlap-collectives): the start copies
// a device buffer, the wait writes one; the handle stays an i64 on the host.
// CHECK-LABEL: func.func @split_collectives
// CHECK: %[[B:.*]] = gpu.alloc (%{{.*}}) : memref<?xf32>
// CHECK: %[[O:.*]] = gpu.alloc (%{{.*}}) : memref<?xf32>
// CHECK: %[[H:.*]] = call @grove_rt_cuda_all_reduce_start_f32(%{{.*}}, %{{.*}}) : (memref<?xf32, strided<[1], offset: ?>>, i32) -> i64
// CHECK: %[[G:.*]] = call @grove_rt_cuda_all_gather_start_f32(%{{.*}}) : (memref<?xf32, strided<[1], offset: ?>>) -> i64
// CHECK: call @grove_rt_cuda_collective_wait_f32(%[[H]], %{{.*}})
// CHECK: call @grove_rt_cuda_collective_wait_f32(%[[G]], %{{.*}})
// CHECK-NOT: call @grove_rt_all_
// CHECK-NOT: call @grove_rt_collective_
// CHECK-DAG: func.func private @grove_rt_cuda_all_reduce_start_f32(memref<?xf32, strided<[1], offset: ?>>, i32) -> i64 attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @grove_rt_cuda_collective_wait_f32(i64, memref<?xf32, strided<[1], offset: ?>>) attributes {llvm.emit_c_interface}
func.func private @grove_rt_all_reduce_start_f32(memref<?xf32, strided<[1], offset: ?>>, i32) -> i64 attributes {llvm.emit_c_interface}
func.func private @grove_rt_all_gather_start_f32(memref<?xf32, strided<[1], offset: ?>>) -> i64 attributes {llvm.emit_c_interface}
func.func private @grove_rt_collective_wait_f32(i64, memref<?xf32, strided<[1], offset: ?>>) attributes {llvm.emit_c_interface}
func.func @split_collectives(%n: index, %m: index) {
  %c1 = arith.constant 1 : i32
  %b = memref.alloc(%n) : memref<?xf32>
  %o = memref.alloc(%n) : memref<?xf32>
  %g = memref.alloc(%m) : memref<?xf32>
  %v = memref.cast %b : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %ov = memref.cast %o : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %gv = memref.cast %g : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %h = call @grove_rt_all_reduce_start_f32(%v, %c1) : (memref<?xf32, strided<[1], offset: ?>>, i32) -> i64
  %hg = call @grove_rt_all_gather_start_f32(%v) : (memref<?xf32, strided<[1], offset: ?>>) -> i64
  call @grove_rt_collective_wait_f32(%h, %ov) : (i64, memref<?xf32, strided<[1], offset: ?>>) -> ()
  call @grove_rt_collective_wait_f32(%hg, %gv) : (i64, memref<?xf32, strided<[1], offset: ?>>) -> ()
  memref.dealloc %b : memref<?xf32>
  memref.dealloc %o : memref<?xf32>
  memref.dealloc %g : memref<?xf32>
  return
}

// -----

// Host code reading one element of device memory outside loops (a state
// counter, an element a kernel wrote) calls the scalar read service, which
// waits for the stream; a buffer only host code touches stays on the host.
// CHECK-LABEL: func.func @scalar_reads
// CHECK-SAME: (%[[STEP:.*]]: memref<i64>, %[[X:.*]]: memref<4x8xf32>, %[[I:.*]]: index)
// CHECK: %[[HOST:.*]] = memref.alloc() : memref<2xi1>
// CHECK: %[[V0:.*]] = memref.cast %[[STEP]] : memref<i64> to memref<i64, strided<[], offset: ?>>
// CHECK: %[[S:.*]] = call @grove_rt_cuda_read_i64(%[[V0]]) : (memref<i64, strided<[], offset: ?>>) -> i64
// CHECK: %[[V1:.*]] = memref.subview %[[X]][%[[I]], %{{.*}}] [1, 1] [1, 1] : memref<4x8xf32> to memref<f32, strided<[], offset: ?>>
// CHECK: %[[E:.*]] = call @grove_rt_cuda_read_f32(%[[V1]])
// CHECK: memref.store %{{.*}}, %[[HOST]][%{{.*}}] : memref<2xi1>
// CHECK: memref.load %[[HOST]][%{{.*}}] : memref<2xi1>
// CHECK: memref.dealloc %[[HOST]] : memref<2xi1>
// CHECK-DAG: func.func private @grove_rt_cuda_read_i64(memref<i64, strided<[], offset: ?>>) -> i64 attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @grove_rt_cuda_read_f32(memref<f32, strided<[], offset: ?>>) -> f32 attributes {llvm.emit_c_interface}
func.func @scalar_reads(%step: memref<i64>, %x: memref<4x8xf32>, %i: index) -> (i64, f32, i1) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %true = arith.constant true
  %flags = memref.alloc() : memref<2xi1>
  %s = memref.load %step[] : memref<i64>
  %e = memref.load %x[%i, %c3] : memref<4x8xf32>
  memref.store %true, %flags[%c0] : memref<2xi1>
  %f = memref.load %flags[%c0] : memref<2xi1>
  memref.dealloc %flags : memref<2xi1>
  return %s, %e, %f : i64, f32, i1
}

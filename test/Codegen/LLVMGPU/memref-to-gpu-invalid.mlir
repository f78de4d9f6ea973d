// RUN: grove-opt %s -split-input-file -verify-diagnostics --grove-memref-to-gpu

// The diagnostics of grove-memref-to-gpu (MemRefToGPU.cpp): a copy that is
// not contiguous on both sides cannot be one gpu.memcpy, and
// grove-legalize-memref should have made it a linalg.copy kernel; host
// code reading device memory; a device twin's host operand that is not a
// buffer of the function, or whose buffer is used as device memory.

func.func @strided_source(%x: memref<4x8xf32, strided<[16, 1], offset: ?>>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'memref.copy' op non-contiguous copy reached the device lowering; run grove-legalize-memref first}}
  memref.copy %x, %y : memref<4x8xf32, strided<[16, 1], offset: ?>> to memref<4x8xf32>
  return
}

// -----

func.func @strided_target(%x: memref<?x8xf32>, %y: memref<?x8xf32, strided<[16, 1]>>) {
  // expected-error @+1 {{'memref.copy' op non-contiguous copy reached the device lowering; run grove-legalize-memref first}}
  memref.copy %x, %y : memref<?x8xf32> to memref<?x8xf32, strided<[16, 1]>>
  return
}

// -----

// Host code cannot read a device buffer (it would need the stream's work
// first): one the function allocates, or an argument.
func.func @host_load(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %b = memref.alloc(%n) : memref<?xf32>
  // expected-error @+1 {{'memref.load' op reads, on the host, a buffer that lives on the device}}
  %v = memref.load %b[%c0] : memref<?xf32>
  memref.dealloc %b : memref<?xf32>
  return %v : f32
}

// -----

func.func @host_load_argument(%x: memref<4xi32>) -> i32 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'memref.load' op reads, on the host, a buffer that lives on the device}}
  %v0 = memref.load %x[%c0] : memref<4xi32>
  return %v0 : i32
}

// -----

// The twin's host operand must be a buffer the function allocates, which
// can then stay on the host; an argument is device memory.
func.func private @grove_rt_tree_schedule(memref<?xi32>, memref<?xi32>, memref<?xi32>, i32, i32, memref<?xi32>, memref<?xi32>, memref<?x4xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>) -> i64
func.func @groups_argument(%l: memref<?xi32>, %g: memref<?x4xi32>) -> i64 {
  %c0_i32 = arith.constant 0 : i32
  // expected-error @+1 {{'func.call' op operand 7 of grove_rt_cuda_tree_schedule must be a buffer allocated in the function (host memory)}}
  %n = call @grove_rt_tree_schedule(%l, %l, %l, %c0_i32, %c0_i32, %l, %l, %g, %l, %l, %l, %l, %l, %l) : (memref<?xi32>, memref<?xi32>, memref<?xi32>, i32, i32, memref<?xi32>, memref<?xi32>, memref<?x4xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>) -> i64
  return %n : i64
}

// -----

// A host buffer (the twin's group table) cannot reach a kernel, a library
// call or a copy, which would treat it as device memory.
func.func private @grove_rt_tree_schedule(memref<?xi32>, memref<?xi32>, memref<?xi32>, i32, i32, memref<?xi32>, memref<?xi32>, memref<?x4xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>) -> i64
func.func @groups_copied(%l: memref<?xi32>, %n: index, %d: memref<?x4xi32>) -> i64 {
  %c0_i32 = arith.constant 0 : i32
  // expected-note @+1 {{the host buffer}}
  %g = memref.alloc(%n) : memref<?x4xi32>
  %k = call @grove_rt_tree_schedule(%l, %l, %l, %c0_i32, %c0_i32, %l, %l, %g, %l, %l, %l, %l, %l, %l) : (memref<?xi32>, memref<?xi32>, memref<?xi32>, i32, i32, memref<?xi32>, memref<?xi32>, memref<?x4xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>) -> i64
  %v = memref.subview %g[0, 0] [%n, 2] [1, 1] : memref<?x4xi32> to memref<?x2xi32, strided<[4, 1]>>
  // expected-error @+1 {{'memref.copy' op uses a buffer that must stay in host memory (a device twin's host operand) as device memory}}
  memref.copy %g, %d : memref<?x4xi32> to memref<?x4xi32>
  memref.dealloc %g : memref<?x4xi32>
  return %k : i64
}

// -----

// Collectives on device buffers need the NCCL communicator.
func.func private @grove_rt_all_reduce_f32(memref<?xf32, strided<[1], offset: ?>>, i32) attributes {llvm.emit_c_interface}
func.func @collective(%n: index) {
  %c1 = arith.constant 1 : i32
  %b = memref.alloc(%n) : memref<?xf32>
  %v = memref.cast %b : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  // expected-error @+1 {{'func.call' op calls grove_rt_all_reduce_f32, a collective on host memory: collectives on the CUDA target need the NCCL communicator, not built yet (docs/distributed.md)}}
  call @grove_rt_all_reduce_f32(%v, %c1) : (memref<?xf32, strided<[1], offset: ?>>, i32) -> ()
  return
}

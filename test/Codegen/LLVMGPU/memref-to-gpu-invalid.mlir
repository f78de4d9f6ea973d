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

// Host code reads one element of device memory outside loops only (each
// read waits for the stream): not once per iteration of a host loop.
func.func @host_load_in_loop(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.alloc(%n) : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %zero, %b[%tx] : memref<?xf32>
    gpu.terminator
  }
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    // expected-error @+1 {{'memref.load' op reads, on the host, a buffer that lives on the device (in a host loop: a read per iteration)}}
    %v = memref.load %b[%i] : memref<?xf32>
    %a = arith.addf %acc, %v : f32
    scf.yield %a : f32
  }
  memref.dealloc %b : memref<?xf32>
  return %sum : f32
}

// -----

// An element type the scalar read service lacks.
func.func @host_load_argument(%x: memref<4xf16>) -> f16 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'memref.load' op reads, on the host, a buffer that lives on the device (an element type the scalar read lacks)}}
  %v0 = memref.load %x[%c0] : memref<4xf16>
  return %v0 : f16
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

// top_k selects on the host; the CUDA target has no device selection.
func.func private @grove_rt_top_k_f32(memref<?xf32, strided<[1], offset: ?>>, memref<?xf32, strided<[1], offset: ?>>, memref<?xi32, strided<[1], offset: ?>>) attributes {llvm.emit_c_interface}
func.func @top_k(%n: index, %k: index) {
  %b = memref.alloc(%n) : memref<?xf32>
  %v = memref.alloc(%k) : memref<?xf32>
  %i = memref.alloc(%k) : memref<?xi32>
  %bc = memref.cast %b : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %vc = memref.cast %v : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %ic = memref.cast %i : memref<?xi32> to memref<?xi32, strided<[1], offset: ?>>
  // expected-error @+1 {{'func.call' op calls grove_rt_top_k_f32, a host service without a CUDA twin, on device memory}}
  call @grove_rt_top_k_f32(%bc, %vc, %ic) : (memref<?xf32, strided<[1], offset: ?>>, memref<?xf32, strided<[1], offset: ?>>, memref<?xi32, strided<[1], offset: ?>>) -> ()
  return
}

// RUN: grove-opt %s -split-input-file -verify-diagnostics --grove-memref-to-gpu

// The diagnostic of grove-memref-to-gpu (MemRefToGPU.cpp): a copy that is
// not contiguous on both sides cannot be one gpu.memcpy, and
// grove-legalize-memref should have made it a linalg.copy kernel.

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

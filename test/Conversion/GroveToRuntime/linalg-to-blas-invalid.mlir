// RUN: grove-opt %s --convert-linalg-to-blas -verify-diagnostics


// A symbol that takes a runtime service's name with another type is an
// error, not a silent mismatch.
// expected-error @+1 {{symbol @grove_rt_matmul_f32 is reserved for the runtime service of type}}
func.func private @grove_rt_matmul_f32(i32)
func.func @clash(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

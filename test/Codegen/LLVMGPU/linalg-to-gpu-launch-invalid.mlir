// RUN: grove-opt %s -split-input-file -verify-diagnostics --convert-linalg-to-gpu-launch
// RUN: not grove-opt %s --convert-linalg-to-gpu-launch=block-size=0 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not grove-opt %s --convert-linalg-to-gpu-launch=block-size=2000 2>&1 | FileCheck %s --check-prefix=TOOBIG
// RUN: grove-opt %s --convert-linalg-to-gpu-launch=block-size=1024 -split-input-file -verify-diagnostics

// The diagnostics of convert-linalg-to-gpu-launch (LinalgToGPULaunch.cpp).

// A block size outside what CUDA allows per block is rejected before any op
// is touched (1024 is the largest that passes, as the last RUN line shows).
// ZERO: error: block-size must be in [1, 1024], got 0{{$}}
// ZERO-NOT: gpu.launch
// TOOBIG: error: block-size must be in [1, 1024], got 2000{{$}}
// TOOBIG-NOT: gpu.launch

// The pass runs after bufferization: a linalg op on tensors is an error,
// not a silently skipped op.
func.func @on_tensors(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{'linalg.fill' op expected memref operands after bufferization}}
  %r = linalg.fill ins(%zero : f32) outs(%x : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @generic_on_tensors(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'linalg.generic' op expected memref operands after bufferization}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x8xf32>) outs(%y : tensor<?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// -----

// A parallel loop that does not index the output: every thread of that
// loop would write the same element.
func.func @racy_output(%x: memref<?x4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'linalg.generic' op output #0 is not indexed by parallel loop 0: threads would race on it}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

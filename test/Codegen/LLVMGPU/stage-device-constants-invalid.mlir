// RUN: grove-opt %s --grove-stage-device-constants -verify-diagnostics

// A mutable global cannot be staged: kernels would write the copy and the
// host would never see it.
memref.global "private" @state : memref<4xf32> = dense<0.0>

func.func @mutable() -> memref<4xf32> {
  // expected-error @below {{reads a mutable global, which device code cannot share with the host}}
  %0 = memref.get_global @state : memref<4xf32>
  return %0 : memref<4xf32>
}

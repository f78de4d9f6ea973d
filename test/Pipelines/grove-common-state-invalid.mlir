// RUN: grove-opt %s -split-input-file -verify-diagnostics --grove-common

// Returning the old value of state the call writes would need the buffer to
// hold two values: a located error, never a write into a private copy that
// would be lost.
module @s {
  grove.param @mean : tensor<4xf32> = 0.0 : f32
  func.func @swap(%x: tensor<4xf32>) -> tensor<4xf32> {
    %m = grove.get_param @mean : tensor<4xf32>
    // expected-error @+2 {{the old value of this state is still read after it is written}}
    // expected-error @+1 {{failed to bufferize op}}
    grove.set_param @mean = %x : tensor<4xf32>
    return %m : tensor<4xf32>
  }
}

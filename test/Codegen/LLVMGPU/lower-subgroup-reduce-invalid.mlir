// RUN: grove-opt %s --grove-lower-subgroup-reduce -verify-diagnostics

// A value wider than one 32-bit shuffle has no lowering here: a located
// error, not a reduction left for convert-gpu-to-nvvm to reject.
gpu.module @kernels {
  gpu.func @sum64(%x: f64, %out: memref<f64>) kernel {
    // expected-error @+1 {{'gpu.subgroup_reduce' op has no shuffle lowering for 'f64'}}
    %r = gpu.subgroup_reduce add %x uniform : (f64) -> f64
    memref.store %r, %out[] : memref<f64>
    gpu.return
  }
}

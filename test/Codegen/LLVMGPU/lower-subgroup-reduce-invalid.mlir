// RUN: grove-opt %s --grove-lower-subgroup-reduce -verify-diagnostics

// A value wider than one 64-bit shuffle (the kernels Grove emits reduce
// scalars) has no lowering here: a located error, not a reduction left
// for convert-gpu-to-nvvm to reject.
gpu.module @kernels {
  gpu.func @sum2x64(%x: vector<2xf64>, %out: memref<vector<2xf64>>) kernel {
    // expected-error @+1 {{'gpu.subgroup_reduce' op has no shuffle lowering for 'vector<2xf64>'}}
    %r = gpu.subgroup_reduce add %x uniform : (vector<2xf64>) -> vector<2xf64>
    memref.store %r, %out[] : memref<vector<2xf64>>
    gpu.return
  }
}

// RUN: grove-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the collective ops' verifiers
// (GroveCollectiveOps.cpp and the ODS constraints).

func.func @gather_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result must be the input's shape 'tensor<4x8xf32>' after a leading world-size dimension, got 'tensor<?x8x4xf32>'}}
  %g = grove.all_gather %x : (tensor<4x8xf32>) -> tensor<?x8x4xf32>
  return
}

// -----

func.func @gather_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{result element type 'f64' differs from the input's 'f32'}}
  %g = grove.all_gather %x : (tensor<4xf32>) -> tensor<?x4xf64>
  return
}

// -----

func.func @gather_world(%x: tensor<4xf32>) {
  // expected-error @+1 {{world-size dimension must be dynamic or positive}}
  %g = grove.all_gather %x : (tensor<4xf32>) -> tensor<0x4xf32>
  return
}

// -----

func.func @reduce_type(%x: tensor<4xi64>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float or 32-bit signless integer values}}
  %a = grove.all_reduce sum %x : tensor<4xi64>
  return
}

// -----

func.func @root(%x: tensor<4xf32>) {
  // expected-error @+1 {{attribute 'root' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %b = grove.broadcast %x {root = -1} : tensor<4xf32>
  return
}

// -----

func.func @block(%t: tensor<i64>) {
  // expected-error @+1 {{expects 1 <= block <= extent, got block 40 of extent 30}}
  %o = grove.random_block %t {seed = 0, stream = 0, extent = 30, block = 40} : tensor<i64>
  return
}

// -----

func.func @stream(%t: tensor<i64>) {
  // expected-error @+1 {{stream must be a 32-bit count, got -1}}
  %o = grove.random_block %t {seed = 0, stream = -1, extent = 30, block = 4} : tensor<i64>
  return
}

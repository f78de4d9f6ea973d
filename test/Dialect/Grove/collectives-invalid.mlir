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

// -----

func.func @topk_size(%x: tensor<4xf32>) {
  // expected-error @+1 {{k = 8 exceeds the input's 4 elements}}
  %v, %i = grove.top_k %x {k = 8} : tensor<4xf32> -> (tensor<8xf32>, tensor<8xi32>)
  return
}

// -----

func.func @topk_results(%x: tensor<40xf32>) {
  // expected-error @+1 {{values and indices must have k = 4 elements}}
  %v, %i = grove.top_k %x {k = 4} : tensor<40xf32> -> (tensor<4xf32>, tensor<3xi32>)
  return
}

// -----

func.func @scatter_shapes(%b: tensor<40xf32>, %i: tensor<4xi32>, %v: tensor<5xf32>) {
  // expected-error @+1 {{indices and values must have one shape}}
  %r = grove.scatter_add %b, %i, %v : (tensor<40xf32>, tensor<4xi32>, tensor<5xf32>) -> tensor<40xf32>
  return
}

// -----

func.func @pack_words(%x: tensor<40xf32>) {
  // expected-error @+1 {{result must have ceil(40 / 32) = 2 words}}
  %w = grove.pack_signs %x : tensor<40xf32> -> tensor<1xi32>
  return
}

// -----

func.func @signs_words(%w: tensor<?x1xi32>, %s: tensor<?xf32>) {
  // expected-error @+1 {{expects a static result of at most 32 elements a word}}
  %m = grove.mean_of_signs %w, %s : (tensor<?x1xi32>, tensor<?xf32>) -> tensor<40xf32>
  return
}

// -----

func.func @signs_scales(%w: tensor<3x2xi32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{expects one scale a rank of words}}
  %m = grove.mean_of_signs %w, %s : (tensor<3x2xi32>, tensor<2xf32>) -> tensor<40xf32>
  return
}

// -----

func.func @uniform_dynamic() {
  // expected-error @+1 {{expects a static shape, got 'tensor<?x2xf32>'}}
  %u = grove.random_uniform {seed = 0, stream = 0} : tensor<?x2xf32>
  return
}

// -----

func.func @indices_count(%t: tensor<i64>) {
  // expected-error @+1 {{expects 1 <= count <= extent < 2^31, got 40 of 30}}
  %i = grove.random_indices %t {seed = 0, stream = 0, extent = 30} : (tensor<i64>) -> tensor<40xi32>
  return
}

// -----

func.func @start_unwaited(%x: tensor<4xf32>) {
  // expected-error @+1 {{request must be used by exactly one grove.collective_wait}}
  %r = grove.all_reduce_start mean %x : tensor<4xf32>
  return
}

// -----

func.func @start_waited_twice(%x: tensor<4xf32>) {
  // expected-error @+1 {{request must be used by exactly one grove.collective_wait}}
  %r = grove.all_reduce_start mean %x : tensor<4xf32>
  %a = grove.collective_wait %r : tensor<4xf32>
  %b = grove.collective_wait %r : tensor<4xf32>
  return
}

// -----

func.func @start_waited_elsewhere(%x: tensor<4xf32>, %c: i1) {
  // expected-error @+1 {{request must be waited for in its own block}}
  %r = grove.all_reduce_start mean %x : tensor<4xf32>
  scf.if %c {
    %a = grove.collective_wait %r : tensor<4xf32>
  }
  return
}

// -----

func.func @wait_type(%x: tensor<4xf32>) {
  %r = grove.all_reduce_start mean %x : tensor<4xf32>
  // expected-error @+1 {{result type 'tensor<4xf64>' differs from the started input's 'tensor<4xf32>'}}
  %a = grove.collective_wait %r : tensor<4xf64>
  return
}

// -----

func.func @start_dynamic(%x: tensor<?xf32>) {
  // expected-error @+1 {{input must have a static shape, got 'tensor<?xf32>'}}
  %r = grove.all_gather_start %x : tensor<?xf32>
  %a = grove.collective_wait %r : tensor<?x?xf32>
  return
}

// -----

func.func @gather_wait_shape(%x: tensor<4xf32>) {
  %r = grove.all_gather_start %x : tensor<4xf32>
  // expected-error @+1 {{result must be the input's shape 'tensor<4xf32>' after a leading world-size dimension, got 'tensor<4xf32>'}}
  %a = grove.collective_wait %r : tensor<4xf32>
  return
}

// -----

func.func @wait_argument(%r: !grove.collective_request) {
  // expected-error @+1 {{request must come from a grove.all_reduce_start or grove.all_gather_start}}
  %a = grove.collective_wait %r : tensor<4xf32>
  return
}

// -----

func.func @int8_words(%x: tensor<10xf32>, %s: tensor<1xf32>) {
  // expected-error @+1 {{result must have ceil(10 / 4) = 3 words}}
  %w = grove.pack_int8 %x, %s : (tensor<10xf32>, tensor<1xf32>) -> tensor<2xi32>
  return
}

// -----

func.func @int8_dynamic(%x: tensor<?xf32>, %s: tensor<1xf32>) {
  // expected-error @+1 {{expects a static input size}}
  %w = grove.pack_int8 %x, %s : (tensor<?xf32>, tensor<1xf32>) -> tensor<3xi32>
  return
}

// -----

func.func @int8_scale(%x: tensor<10xf32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{expects one scale of the input's element type}}
  %w = grove.pack_int8 %x, %s : (tensor<10xf32>, tensor<2xf32>) -> tensor<3xi32>
  return
}

// -----

func.func @int8_mean_words(%w: tensor<?x2xi32>, %s: tensor<?xf32>) {
  // expected-error @+1 {{expects a static result of at most 4 elements a word}}
  %m = grove.mean_of_int8 %w, %s : (tensor<?x2xi32>, tensor<?xf32>) -> tensor<10xf32>
  return
}

// -----

func.func @int8_mean_scales(%w: tensor<3x3xi32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{expects one scale a rank of words}}
  %m = grove.mean_of_int8 %w, %s : (tensor<3x3xi32>, tensor<2xf32>) -> tensor<10xf32>
  return
}

// -----

func.func @int8_mean_type(%w: tensor<3x3xi32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{result must have the scales' element type}}
  %m = grove.mean_of_int8 %w, %s : (tensor<3x3xi32>, tensor<3xf32>) -> tensor<10xf64>
  return
}

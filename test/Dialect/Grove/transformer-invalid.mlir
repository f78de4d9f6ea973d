// RUN: grove-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of GroveTransformerOps.cpp.

func.func @scale_bias(%x: tensor<2x4xf32>, %g: tensor<4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'grove.layer_norm' op expects scale and bias of one type, got 'tensor<4xf32>' and 'tensor<3xf32>'}}
  %y = grove.layer_norm %x, %g, %b : (tensor<2x4xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @scale_type(%x: tensor<2x4xf32>, %g: tensor<4xf64>) {
  // expected-error @+1 {{'grove.layer_norm' op expects scale of the input's element type, got 'f64' and 'f32'}}
  %y = grove.layer_norm %x, %g, %g : (tensor<2x4xf32>, tensor<4xf64>, tensor<4xf64>) -> tensor<2x4xf32>
  return
}

// -----

func.func @scale_rank(%x: tensor<2x4xf32>, %g: tensor<2x4xf32>) {
  // expected-error @+1 {{'grove.layer_norm' op expects scale of rank 1 to 1 (the input's rank 2 less at least one row dimension), got 2}}
  %y = grove.layer_norm %x, %g, %g : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @scale_dynamic(%x: tensor<2x?xf32>, %g: tensor<?xf32>) {
  // expected-error @+1 {{'grove.layer_norm' op expects a static, non-empty scale shape, got 'tensor<?xf32>'}}
  %y = grove.layer_norm %x, %g, %g : (tensor<2x?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<2x?xf32>
  return
}

// -----

func.func @trailing(%x: tensor<2x5xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.layer_norm' op expects the input's trailing dimensions to be the scale's shape 'tensor<4xf32>', got 'tensor<2x5xf32>'}}
  %y = grove.layer_norm %x, %g, %g : (tensor<2x5xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @scale_empty(%x: tensor<2x0xf32>, %g: tensor<0xf32>) {
  // expected-error @+1 {{'grove.layer_norm' op expects a static, non-empty scale shape, got 'tensor<0xf32>'}}
  %y = grove.layer_norm %x, %g, %g : (tensor<2x0xf32>, tensor<0xf32>, tensor<0xf32>) -> tensor<2x0xf32>
  return
}

// -----

func.func @trailing_dynamic(%x: tensor<2x?xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.layer_norm' op expects the input's trailing dimensions to be the scale's shape 'tensor<4xf32>', got 'tensor<2x?xf32>'}}
  %y = grove.layer_norm %x, %g, %g : (tensor<2x?xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x?xf32>
  return
}

// -----

func.func @result(%x: tensor<2x4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.layer_norm' op expects the result to be the input's type 'tensor<2x4xf32>', got 'tensor<?x4xf32>'}}
  %y = grove.layer_norm %x, %g, %g : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @epsilon(%x: tensor<2x4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.layer_norm' op expects a positive epsilon}}
  %y = grove.layer_norm %x, %g, %g {epsilon = 0.0 : f64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @grad_types(%dy: tensor<3x4xf32>, %x: tensor<2x4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.layer_norm_grad' op expects output_grad and input_grad of the input's type 'tensor<2x4xf32>', got 'tensor<3x4xf32>' and 'tensor<2x4xf32>'}}
  %dx, %ds, %db = grove.layer_norm_grad %dy, %x, %g : (tensor<3x4xf32>, tensor<2x4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @grad_scale(%dy: tensor<2x4xf32>, %x: tensor<2x4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.layer_norm_grad' op expects scale_grad and bias_grad of the scale's type 'tensor<4xf32>'}}
  %dx, %ds, %db = grove.layer_norm_grad %dy, %x, %g : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>, tensor<5xf32>)
  return
}

// -----

func.func @grad_epsilon(%dy: tensor<2x4xf32>, %x: tensor<2x4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.layer_norm_grad' op expects a positive epsilon}}
  %dx, %ds, %db = grove.layer_norm_grad %dy, %x, %g {epsilon = -1.0 : f64} : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @table_rank(%t: tensor<100xf32>, %ids: tensor<3xi32>) {
  // expected-error @+1 {{'grove.embedding' op expects a rank-2 table, got 'tensor<100xf32>'}}
  %e = grove.embedding %t, %ids : (tensor<100xf32>, tensor<3xi32>) -> tensor<3xf32>
  return
}

// -----

func.func @embedding_result(%t: tensor<100x8xf32>, %ids: tensor<?x3xi32>) {
  // expected-error @+1 {{'grove.embedding' op expects the ids' shape and a table row, 'tensor<?x3x8xf32>', got 'tensor<?x8xf32>'}}
  %e = grove.embedding %t, %ids : (tensor<100x8xf32>, tensor<?x3xi32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @embedding_ids(%t: tensor<100x8xf32>, %ids: tensor<3xi64>) {
  // expected-error @+1 {{'grove.embedding' op operand #1 must be ranked tensor of 32-bit signless integer values, but got 'tensor<3xi64>'}}
  %e = grove.embedding %t, %ids : (tensor<100x8xf32>, tensor<3xi64>) -> tensor<3x8xf32>
  return
}

// -----

func.func @order(%ids: tensor<5xi32>) {
  // expected-error @+1 {{'grove.group_by_index' op expects one order entry per index (5), got 'tensor<4xi32>'}}
  %o, %off = grove.group_by_index %ids {num_groups = 3} : tensor<5xi32> -> (tensor<4xi32>, tensor<4xi32>)
  return
}

// -----

func.func @offsets(%ids: tensor<?xi32>) {
  // expected-error @+1 {{'grove.group_by_index' op expects num_groups + 1 = 4 offsets, got 'tensor<3xi32>'}}
  %o, %off = grove.group_by_index %ids {num_groups = 3} : tensor<?xi32> -> (tensor<?xi32>, tensor<3xi32>)
  return
}

// -----

func.func @groups(%ids: tensor<?xi32>) {
  // expected-error @+1 {{'grove.group_by_index' op attribute 'num_groups' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %o, %off = grove.group_by_index %ids {num_groups = 0} : tensor<?xi32> -> (tensor<?xi32>, tensor<1xi32>)
  return
}

// -----

func.func @groups_big(%ids: tensor<?xi32>) {
  // expected-error @+1 {{'grove.group_by_index' op expects num_groups below 2^31 - 1, got 2147483647}}
  %o, %off = grove.group_by_index %ids {num_groups = 2147483647} : tensor<?xi32> -> (tensor<?xi32>, tensor<2147483648xi32>)
  return
}

// -----

func.func @dropout_rate(%x: tensor<4xf32>) {
  // expected-error @+1 {{'grove.dropout' op expects a rate in [0, 1), got 1}}
  %y = grove.dropout %x {rate = 1.0 : f64, stream = 0} : tensor<4xf32>
  return
}

// -----

func.func @dropout_stream(%x: tensor<4xf32>) {
  // expected-error @+1 {{'grove.dropout' op attribute 'stream' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %y = grove.dropout %x {rate = 0.5 : f64, stream = -1} : tensor<4xf32>
  return
}

// -----

func.func @dropout_generator(%x: tensor<4xf32>) {
  // expected-error @+1 {{'grove.dropout' op expects a generator name of letters, digits, '_' and '.', got 'a b'}}
  %y = grove.dropout %x {rate = 0.5 : f64, stream = 0, generator = "a b"} : tensor<4xf32>
  return
}

// -----

func.func @philox_rate(%x: tensor<4xf32>, %s: tensor<i64>) {
  // expected-error @+1 {{'grove.philox_dropout' op expects a rate in [0, 1), got -5.000000e-01}}
  %y = grove.philox_dropout %x, %s, %s {rate = -0.5 : f64, stream = 0} : tensor<4xf32>
  return
}

// -----

func.func @attn_rank(%q: tensor<4x16x8xf32>) {
  // expected-error @+1 {{'grove.attention' op expects rank-4 query, key and value [B, H, S, D], got 'tensor<4x16x8xf32>', 'tensor<4x16x8xf32>' and 'tensor<4x16x8xf32>'}}
  %o = grove.attention %q, %q, %q : (tensor<4x16x8xf32>, tensor<4x16x8xf32>, tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  return
}

// -----

func.func @attn_types(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x3x4xf64>) {
  // expected-error @+1 {{'grove.attention' op expects query, key and value of one element type}}
  %o = grove.attention %q, %k, %q : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf64>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  return
}

// -----

func.func @attn_heads(%q: tensor<1x2x3x4xf32>, %k: tensor<1x3x3x4xf32>) {
  // expected-error @+1 {{'grove.attention' op expects one batch and head count (dimensions 0 and 1) in query, key and value}}
  %o = grove.attention %q, %k, %k : (tensor<1x2x3x4xf32>, tensor<1x3x3x4xf32>, tensor<1x3x3x4xf32>) -> tensor<1x2x3x4xf32>
  return
}

// -----

func.func @attn_length(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x6x4xf32>) {
  // expected-error @+1 {{'grove.attention' op expects key and value of one length (dimension 2)}}
  %o = grove.attention %q, %k, %v : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x6x4xf32>) -> tensor<1x2x3x4xf32>
  return
}

// -----

func.func @attn_head_size(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x8xf32>) {
  // expected-error @+1 {{'grove.attention' op expects query and key of one head size (dimension 3)}}
  %o = grove.attention %q, %k, %k : (tensor<1x2x3x4xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @attn_result(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x6xf32>) {
  // expected-error @+1 {{'grove.attention' op expects an output of type 'tensor<1x2x3x6xf32>', got 'tensor<1x2x3x4xf32>'}}
  %o = grove.attention %q, %k, %v : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x6xf32>) -> tensor<1x2x3x4xf32>
  return
}

// -----

func.func @attn_mask(%q: tensor<1x2x3x4xf32>, %m: tensor<1x2x3x7xf32>) {
  // expected-error @+1 {{'grove.attention' op expects a rank-4 mask of the query's element type broadcasting to [B, H, Sq, Sk], got 'tensor<1x2x3x7xf32>'}}
  %o = grove.attention %q, %q, %q mask(%m : tensor<1x2x3x7xf32>) : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  return
}

// -----

func.func @attn_scale(%q: tensor<1x2x3x4xf32>) {
  // expected-error @+1 {{'grove.attention' op expects a positive scale, got -1}}
  %o = grove.attention %q, %q, %q {scale = -1.0 : f64} : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  return
}

// -----

func.func @attn_head_dynamic(%q: tensor<1x2x3x?xf32>) {
  // expected-error @+1 {{'grove.attention' op expects a static head size or a scale, got 'tensor<1x2x3x?xf32>'}}
  %o = grove.attention %q, %q, %q : (tensor<1x2x3x?xf32>, tensor<1x2x3x?xf32>, tensor<1x2x3x?xf32>) -> tensor<1x2x3x?xf32>
  return
}

// -----

func.func @attn_tile(%q: tensor<1x2x3x4xf32>) {
  // expected-error @+1 {{'grove.attention' op expects a key_tile of at least 1, got 0}}
  %o = grove.attention %q, %q, %q {key_tile = 0 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  return
}

// -----

func.func @attn_grad_types(%q: tensor<1x2x3x4xf32>, %o: tensor<1x2x3x4xf32>, %do: tensor<1x2x3x5xf32>) {
  // expected-error @+1 {{'grove.attention_grad' op expects output_grad of the output's type 'tensor<1x2x3x4xf32>', got 'tensor<1x2x3x5xf32>'}}
  %a, %b, %c = grove.attention_grad %do, %q, %q, %q, %o : (tensor<1x2x3x5xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>)
  return
}

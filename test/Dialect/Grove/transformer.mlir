// RUN: grove-opt %s | grove-opt | FileCheck %s
// RUN: grove-opt %s --mlir-print-op-generic | grove-opt | FileCheck %s

// Round trip of the transformer ops (GroveTransformerOps.td), of
// grove.group_by_index and of grove.gelu_tanh.

// CHECK-LABEL: func.func @layer_norm
// CHECK: grove.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.9999999999999998E-13 : f64} : (tensor<?x7x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x7x16xf32>
// CHECK: grove.layer_norm %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x3x4xbf16>, tensor<3x4xbf16>, tensor<3x4xbf16>) -> tensor<2x3x4xbf16>
// CHECK: grove.layer_norm_grad %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.9999999999999998E-13 : f64} : (tensor<?x7x16xf32>, tensor<?x7x16xf32>, tensor<16xf32>) -> (tensor<?x7x16xf32>, tensor<16xf32>, tensor<16xf32>)
func.func @layer_norm(%x: tensor<?x7x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>,
                      %h: tensor<2x3x4xbf16>, %hg: tensor<3x4xbf16>) -> tensor<?x7x16xf32> {
  %y = grove.layer_norm %x, %g, %b {epsilon = 1.0e-12 : f64}
      : (tensor<?x7x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x7x16xf32>
  %z = grove.layer_norm %h, %hg, %hg : (tensor<2x3x4xbf16>, tensor<3x4xbf16>, tensor<3x4xbf16>) -> tensor<2x3x4xbf16>
  %dx, %ds, %db = grove.layer_norm_grad %y, %x, %g {epsilon = 1.0e-12 : f64}
      : (tensor<?x7x16xf32>, tensor<?x7x16xf32>, tensor<16xf32>)
      -> (tensor<?x7x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %dx : tensor<?x7x16xf32>
}

// CHECK-LABEL: func.func @embedding
// CHECK: grove.embedding %{{.*}}, %{{.*}} : (tensor<100x8xf32>, tensor<?x5xi32>) -> tensor<?x5x8xf32>
// CHECK: grove.embedding %{{.*}}, %{{.*}} : (tensor<100x8xf32>, tensor<i32>) -> tensor<8xf32>
// CHECK: grove.group_by_index %{{.*}} {num_groups = 100 : i64} : tensor<?xi32> -> (tensor<?xi32>, tensor<101xi32>)
func.func @embedding(%t: tensor<100x8xf32>, %ids: tensor<?x5xi32>, %one: tensor<i32>,
                     %flat: tensor<?xi32>) -> tensor<?x5x8xf32> {
  %e = grove.embedding %t, %ids : (tensor<100x8xf32>, tensor<?x5xi32>) -> tensor<?x5x8xf32>
  %s = grove.embedding %t, %one : (tensor<100x8xf32>, tensor<i32>) -> tensor<8xf32>
  %o, %off = grove.group_by_index %flat {num_groups = 100}
      : tensor<?xi32> -> (tensor<?xi32>, tensor<101xi32>)
  return %e : tensor<?x5x8xf32>
}

// CHECK-LABEL: func.func @gelu_tanh
// CHECK: grove.gelu_tanh %{{.*}} : tensor<?x4xf32>
func.func @gelu_tanh(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = grove.gelu_tanh %x : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// CHECK-LABEL: func.func @dropout
// CHECK: grove.dropout %{{.*}} {rate = 1.000000e-01 : f64, stream = 3 : i64} : tensor<?x4xf32>
// CHECK: grove.dropout %{{.*}} {generator = "attn", rate = 5.000000e-01 : f64, stream = 0 : i64} : tensor<?x4xf32>
// CHECK: grove.philox_dropout %{{.*}}, %{{.*}}, %{{.*}} {rate = 1.000000e-01 : f64, stream = 3 : i64} : tensor<?x4xf32>
func.func @dropout(%x: tensor<?x4xf32>, %s: tensor<i64>, %o: tensor<i64>) -> tensor<?x4xf32> {
  %y = grove.dropout %x {rate = 0.1 : f64, stream = 3} : tensor<?x4xf32>
  %z = grove.dropout %y {rate = 0.5 : f64, stream = 0, generator = "attn"} : tensor<?x4xf32>
  %p = grove.philox_dropout %z, %s, %o {rate = 0.1 : f64, stream = 3} : tensor<?x4xf32>
  return %p : tensor<?x4xf32>
}

// CHECK-LABEL: func.func @attention
// CHECK: grove.attention %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x4x16x8xf32>, tensor<?x4x32x8xf32>, tensor<?x4x32x6xf32>) -> tensor<?x4x16x6xf32>
// CHECK: grove.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : tensor<?x1x1x32xf32>) {causal, key_tile = 16 : i64, scale = 5.000000e-01 : f64}
// CHECK: grove.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : tensor<?x1x1x32xf32>) {causal}
func.func @attention(%q: tensor<?x4x16x8xf32>, %k: tensor<?x4x32x8xf32>, %v: tensor<?x4x32x6xf32>,
                     %m: tensor<?x1x1x32xf32>) -> tensor<?x4x16x6xf32> {
  %o = grove.attention %q, %k, %v : (tensor<?x4x16x8xf32>, tensor<?x4x32x8xf32>, tensor<?x4x32x6xf32>) -> tensor<?x4x16x6xf32>
  %p = grove.attention %q, %k, %v mask(%m : tensor<?x1x1x32xf32>) {causal, key_tile = 16, scale = 0.5 : f64}
      : (tensor<?x4x16x8xf32>, tensor<?x4x32x8xf32>, tensor<?x4x32x6xf32>) -> tensor<?x4x16x6xf32>
  %dq, %dk, %dv = grove.attention_grad %o, %q, %k, %v, %p mask(%m : tensor<?x1x1x32xf32>) {causal}
      : (tensor<?x4x16x6xf32>, tensor<?x4x16x8xf32>, tensor<?x4x32x8xf32>, tensor<?x4x32x6xf32>, tensor<?x4x16x6xf32>)
      -> (tensor<?x4x16x8xf32>, tensor<?x4x32x8xf32>, tensor<?x4x32x6xf32>)
  return %o : tensor<?x4x16x6xf32>
}

// RUN: grove-opt %s | grove-opt | FileCheck %s
// RUN: grove-opt %s --canonicalize --cse | FileCheck %s --check-prefix=KEPT

// The collective ops round-trip (GroveCollectiveOps.td).

// CHECK-LABEL: func.func @collectives
// CHECK: grove.all_reduce sum %{{.*}} : tensor<4x8xf32>
// CHECK: grove.all_reduce mean %{{.*}} : tensor<4x8xf32>
// CHECK: grove.all_gather %{{.*}} : (tensor<4x8xf32>) -> tensor<?x4x8xf32>
// CHECK: grove.all_gather %{{.*}} : (tensor<16xi32>) -> tensor<4x16xi32>
// CHECK: grove.broadcast %{{.*}} {root = 1 : i64} : tensor<4x8xf32>
// CHECK: grove.world_size : index
// CHECK: grove.world_rank : index
// CHECK: grove.random_block %{{.*}} {block = 4 : i64, extent = 30 : i64, seed = 7 : i64, stream = 2 : i64} : tensor<i64>
func.func @collectives(%x: tensor<4x8xf32>, %i: tensor<16xi32>, %t: tensor<i64>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<?x4x8xf32>, tensor<4x16xi32>,
        tensor<4x8xf32>, index, index, index) {
  %s = grove.all_reduce sum %x : tensor<4x8xf32>
  %m = grove.all_reduce mean %x : tensor<4x8xf32>
  %g = grove.all_gather %x : (tensor<4x8xf32>) -> tensor<?x4x8xf32>
  %gi = grove.all_gather %i : (tensor<16xi32>) -> tensor<4x16xi32>
  %b = grove.broadcast %x {root = 1} : tensor<4x8xf32>
  %n = grove.world_size : index
  %r = grove.world_rank : index
  %o = grove.random_block %t {seed = 7, stream = 2, extent = 30, block = 4} : tensor<i64>
  return %s, %m, %g, %gi, %b, %n, %r, %o : tensor<4x8xf32>, tensor<4x8xf32>,
      tensor<?x4x8xf32>, tensor<4x16xi32>, tensor<4x8xf32>, index, index, index
}

// Collectives meet in program order on every rank: an unused one is kept,
// and two equal ones are not merged.
// KEPT-LABEL: func.func @kept
// KEPT-COUNT-3: grove.all_reduce mean
// KEPT-NOT: grove.all_reduce
func.func @kept(%x: tensor<8xf32>) -> tensor<8xf32> {
  %a = grove.all_reduce mean %x : tensor<8xf32>
  %b = grove.all_reduce mean %x : tensor<8xf32>
  %c = grove.all_reduce mean %x : tensor<8xf32>
  return %c : tensor<8xf32>
}

// A started all-reduce and all-gather and their waits; the canonicalizer
// keeps them all, even with a result unused.
// CHECK-LABEL: func.func @started
// CHECK: %[[R:.*]] = grove.all_reduce_start sum %{{.*}} : tensor<4x8xbf16>
// CHECK: %[[G:.*]] = grove.all_gather_start %{{.*}} : tensor<8xf32>
// CHECK: grove.collective_wait %[[R]] : tensor<4x8xbf16>
// CHECK: grove.collective_wait %[[G]] : tensor<?x8xf32>
// KEPT-LABEL: func.func @started
// KEPT: grove.all_reduce_start
// KEPT-COUNT-2: grove.collective_wait
func.func @started(%x: tensor<4x8xbf16>, %y: tensor<8xf32>) -> tensor<?x8xf32> {
  %r = grove.all_reduce_start sum %x : tensor<4x8xbf16>
  %s = grove.all_gather_start %y : tensor<8xf32>
  %w = grove.collective_wait %r : tensor<4x8xbf16>
  %g = grove.collective_wait %s : tensor<?x8xf32>
  return %g : tensor<?x8xf32>
}

// The compressors' primitives.
// CHECK-LABEL: func.func @compressors
// CHECK: grove.top_k %{{.*}} {k = 4 : i64} : tensor<40xf32> -> (tensor<4xf32>, tensor<4xi32>)
// CHECK: grove.scatter_add %{{.*}}, %{{.*}}, %{{.*}} : (tensor<40xf32>, tensor<?x4xi32>, tensor<?x4xf32>) -> tensor<40xf32>
// CHECK: grove.pack_signs %{{.*}} : tensor<40xf32> -> tensor<2xi32>
// CHECK: grove.mean_of_signs %{{.*}}, %{{.*}} : (tensor<?x2xi32>, tensor<?xf32>) -> tensor<40xf32>
// CHECK: grove.convert %{{.*}} : tensor<40xf32> -> tensor<40xbf16>
// CHECK: grove.random_uniform {seed = 1 : i64, stream = 2 : i64} : tensor<8x2xf32>
func.func @compressors(%x: tensor<40xf32>, %i: tensor<?x4xi32>, %v: tensor<?x4xf32>,
                       %w: tensor<?x2xi32>, %s: tensor<?xf32>)
    -> (tensor<4xf32>, tensor<4xi32>, tensor<40xf32>, tensor<2xi32>, tensor<40xf32>, tensor<40xbf16>, tensor<8x2xf32>) {
  %tv, %ti = grove.top_k %x {k = 4} : tensor<40xf32> -> (tensor<4xf32>, tensor<4xi32>)
  %a = grove.scatter_add %x, %i, %v : (tensor<40xf32>, tensor<?x4xi32>, tensor<?x4xf32>) -> tensor<40xf32>
  %p = grove.pack_signs %x : tensor<40xf32> -> tensor<2xi32>
  %m = grove.mean_of_signs %w, %s : (tensor<?x2xi32>, tensor<?xf32>) -> tensor<40xf32>
  %h = grove.convert %x : tensor<40xf32> -> tensor<40xbf16>
  %u = grove.random_uniform {seed = 1, stream = 2} : tensor<8x2xf32>
  return %tv, %ti, %a, %p, %m, %h, %u : tensor<4xf32>, tensor<4xi32>, tensor<40xf32>, tensor<2xi32>, tensor<40xf32>, tensor<40xbf16>, tensor<8x2xf32>
}

// The int8 compressor's pair: 4 codes a word under one scale, and the mean
// of the ranks' decoded codes.
// CHECK-LABEL: func.func @int8
// CHECK: grove.pack_int8 %{{.*}}, %{{.*}} : (tensor<10xf32>, tensor<1xf32>) -> tensor<3xi32>
// CHECK: grove.mean_of_int8 %{{.*}}, %{{.*}} : (tensor<?x3xi32>, tensor<?xf32>) -> tensor<10xf32>
func.func @int8(%x: tensor<10xf32>, %s: tensor<1xf32>, %w: tensor<?x3xi32>,
                %r: tensor<?xf32>) -> (tensor<3xi32>, tensor<10xf32>) {
  %p = grove.pack_int8 %x, %s : (tensor<10xf32>, tensor<1xf32>) -> tensor<3xi32>
  %m = grove.mean_of_int8 %w, %r : (tensor<?x3xi32>, tensor<?xf32>) -> tensor<10xf32>
  return %p, %m : tensor<3xi32>, tensor<10xf32>
}

// CHECK-LABEL: func.func @indices
// CHECK: grove.random_indices %{{.*}} {extent = 1000 : i64, seed = 3 : i64, stream = 1 : i64} : (tensor<i64>) -> tensor<31xi32>
func.func @indices(%t: tensor<i64>) -> tensor<31xi32> {
  %i = grove.random_indices %t {seed = 3, stream = 1, extent = 1000} : (tensor<i64>) -> tensor<31xi32>
  return %i : tensor<31xi32>
}

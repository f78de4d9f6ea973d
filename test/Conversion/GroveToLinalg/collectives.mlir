// RUN: grove-opt %s --convert-grove-to-linalg | FileCheck %s

// A block draw becomes splitmix64 in integer arithmetic (Collectives.cpp).
// The collectives stay for bufferization, the world's size and rank for
// convert-grove-checks-to-runtime (they keep their declared effects).

// CHECK-LABEL: func.func @world
// CHECK: grove.world_size : index
// CHECK: grove.world_rank : index
// CHECK: grove.all_reduce mean
// CHECK: grove.all_gather
// CHECK: grove.broadcast
func.func @world(%x: tensor<8xf32>) -> (index, index, tensor<8xf32>, tensor<?x8xf32>, tensor<8xf32>) {
  %n = grove.world_size : index
  %r = grove.world_rank : index
  %a = grove.all_reduce mean %x : tensor<8xf32>
  %g = grove.all_gather %x : (tensor<8xf32>) -> tensor<?x8xf32>
  %b = grove.broadcast %x {root = 0} : tensor<8xf32>
  return %n, %r, %a, %g, %b : index, index, tensor<8xf32>, tensor<?x8xf32>, tensor<8xf32>
}

// key = seed ^ (stream << 32) = 7 ^ (3 << 32) = 12884901895; 8 blocks of 4
// in 30 elements, the last clamped to start at 26.
// CHECK-LABEL: func.func @block
// CHECK: %[[T:.*]] = tensor.extract %{{.*}}[] : tensor<i64>
// CHECK: %[[KEY:.*]] = arith.constant 12884901895 : i64
// CHECK: %[[X:.*]] = arith.xori %[[T]], %[[KEY]] : i64
// CHECK: %[[GOLDEN:.*]] = arith.constant -7046029254386353131 : i64
// CHECK: arith.addi %[[X]], %[[GOLDEN]] : i64
// CHECK: arith.shrui
// CHECK: arith.muli
// CHECK: arith.shrui
// CHECK: arith.muli
// CHECK: arith.shrui
// CHECK: %[[H:.*]] = arith.xori
// CHECK: %[[BLOCKS:.*]] = arith.constant 8 : i64
// CHECK: %[[P:.*]] = arith.remui %[[H]], %[[BLOCKS]] : i64
// CHECK: %[[LAST:.*]] = arith.constant 26 : i64
// CHECK: %[[SIZE:.*]] = arith.constant 4 : i64
// CHECK: %[[O:.*]] = arith.muli %[[P]], %[[SIZE]] : i64
// CHECK: %[[C:.*]] = arith.minui %[[O]], %[[LAST]] : i64
// CHECK: arith.index_cast %[[C]] : i64 to index
func.func @block(%t: tensor<i64>) -> index {
  %o = grove.random_block %t {seed = 7, stream = 3, extent = 30, block = 4} : tensor<i64>
  return %o : index
}

// Sign bits: padded to 64 elements, 2 x 32, or-reduced along the 32.
// CHECK-LABEL: func.func @pack
// CHECK: %[[PAD:.*]] = tensor.pad %{{.*}} low[0] high[24]
// CHECK: %[[GRID:.*]] = tensor.expand_shape %[[PAD]] {{\[\[}}0, 1]] output_shape [2, 32] : tensor<64xf32> into tensor<2x32xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[GRID]] : tensor<2x32xf32>)
// CHECK: arith.cmpf olt
// CHECK: linalg.index 1
// CHECK: arith.shli
// CHECK: arith.ori
func.func @pack(%x: tensor<40xf32>) -> tensor<2xi32> {
  %w = grove.pack_signs %x : tensor<40xf32> -> tensor<2xi32>
  return %w : tensor<2xi32>
}

// The ranks' scaled signs: words x bits x ranks, ranks reduced, each term
// divided by the rank count; cut back to 40.
// CHECK-LABEL: func.func @signs
// CHECK: %[[R:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x2xi32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.shrui
// CHECK: arith.negf
// CHECK: arith.divf
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<2x32xf32> into tensor<64xf32>
// CHECK: tensor.extract_slice %{{.*}}[0] [40] [1] : tensor<64xf32> to tensor<40xf32>
func.func @signs(%w: tensor<?x2xi32>, %s: tensor<?xf32>) -> tensor<40xf32> {
  %m = grove.mean_of_signs %w, %s : (tensor<?x2xi32>, tensor<?xf32>) -> tensor<40xf32>
  return %m : tensor<40xf32>
}

// 8-bit codes: padded to 12, viewed as 3 words x 4 bytes, bytes reduced;
// each code rounded, clamped to +-127 (NaN to 0), masked and shifted to
// its byte.
// CHECK-LABEL: func.func @pack_int8
// CHECK: tensor.pad %{{.*}} low[0] high[2]
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [3, 4] : tensor<12xf32> into tensor<3x4xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.divf
// CHECK: %[[Q:.*]] = math.floor
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[Q]], %[[Q]]
// CHECK: arith.maxnumf %[[Q]]
// CHECK: %[[C:.*]] = arith.minnumf
// CHECK: %[[S:.*]] = arith.select %[[NAN]], %{{.*}}, %[[C]]
// CHECK: arith.fptosi %[[S]]
// CHECK: arith.andi
// CHECK: linalg.index 1
// CHECK: arith.shli
// CHECK: arith.ori
func.func @pack_int8(%x: tensor<10xf32>, %s: tensor<1xf32>) -> tensor<3xi32> {
  %w = grove.pack_int8 %x, %s : (tensor<10xf32>, tensor<1xf32>) -> tensor<3xi32>
  return %w : tensor<3xi32>
}

// The ranks' scaled codes: words x bytes x ranks, ranks reduced, each byte
// sign-extended (shift up, arithmetic shift down), each term divided by the
// rank count; cut back to 10.
// CHECK-LABEL: func.func @mean_of_int8
// CHECK: %[[R:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x3xi32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.shli
// CHECK: arith.shrsi
// CHECK: arith.sitofp
// CHECK: arith.mulf
// CHECK: arith.divf
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<3x4xf32> into tensor<12xf32>
// CHECK: tensor.extract_slice %{{.*}}[0] [10] [1] : tensor<12xf32> to tensor<10xf32>
func.func @mean_of_int8(%w: tensor<?x3xi32>, %s: tensor<?xf32>) -> tensor<10xf32> {
  %m = grove.mean_of_int8 %w, %s : (tensor<?x3xi32>, tensor<?xf32>) -> tensor<10xf32>
  return %m : tensor<10xf32>
}

// A sequential loop, bounds-checked, over the flattened messages.
// CHECK-LABEL: func.func @scatter
// CHECK: %[[I:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<?x4xi32> into tensor<?xi32>
// CHECK: %[[V:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<?x4xf32> into tensor<?xf32>
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<40xf32>)
// CHECK: tensor.extract %[[I]][%[[J]]]
// CHECK-DAG: arith.cmpi sge
// CHECK-DAG: arith.cmpi slt
// CHECK: scf.if
// CHECK: arith.addf
// CHECK: tensor.insert
func.func @scatter(%b: tensor<40xf32>, %i: tensor<?x4xi32>, %v: tensor<?x4xf32>) -> tensor<40xf32> {
  %r = grove.scatter_add %b, %i, %v : (tensor<40xf32>, tensor<?x4xi32>, tensor<?x4xf32>) -> tensor<40xf32>
  return %r : tensor<40xf32>
}

// CHECK-LABEL: func.func @convert
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @convert(%x: tensor<8xf32>, %h: tensor<8xf16>) -> (tensor<8xf32>, tensor<8xbf16>) {
  %a = grove.convert %x : tensor<8xf32> -> tensor<8xbf16>
  %b = grove.convert %a : tensor<8xbf16> -> tensor<8xf32>
  %c = grove.convert %h : tensor<8xf16> -> tensor<8xbf16>
  return %b, %c : tensor<8xf32>, tensor<8xbf16>
}

// Element (i, j) hashes its row-major index 2 i + j with the key.
// CHECK-LABEL: func.func @uniform
// CHECK: linalg.generic
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK: arith.xori
// CHECK: arith.shrui
// CHECK: arith.uitofp %{{.*}} : i64 to f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
func.func @uniform() -> tensor<8x2xf32> {
  %u = grove.random_uniform {seed = 1, stream = 2} : tensor<8x2xf32>
  return %u : tensor<8x2xf32>
}

// (o + j s) mod 1000 with s = 617 (nearest 0.618 x 1000 coprime to it) and
// o the counter's splitmix64 draw mod 1000.
// CHECK-LABEL: func.func @indices
// CHECK: %[[T:.*]] = tensor.extract %{{.*}}[] : tensor<i64>
// CHECK: %[[O:.*]] = arith.remui %{{.*}}, %{{.*}} : i64
// CHECK: linalg.generic
// CHECK: %[[J:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[S:.*]] = arith.constant 617 : i64
// CHECK: arith.muli %[[J]], %[[S]] : i64
// CHECK: arith.addi %[[O]],
// CHECK: arith.remui
// CHECK: arith.trunci %{{.*}} : i64 to i32
func.func @indices(%t: tensor<i64>) -> tensor<31xi32> {
  %i = grove.random_indices %t {seed = 3, stream = 1, extent = 1000} : (tensor<i64>) -> tensor<31xi32>
  return %i : tensor<31xi32>
}

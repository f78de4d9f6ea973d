// RUN: grove-opt %s --convert-grove-to-linalg | FileCheck %s

// The world's size and rank become runtime calls; a block draw becomes
// splitmix64 in integer arithmetic (Collectives.cpp). The collectives stay
// for bufferization.

// CHECK-LABEL: func.func @world
// CHECK: %[[N:.*]] = call @grove_rt_world_size() : () -> i64
// CHECK: arith.index_cast %[[N]] : i64 to index
// CHECK: %[[R:.*]] = call @grove_rt_world_rank() : () -> i64
// CHECK: arith.index_cast %[[R]] : i64 to index
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

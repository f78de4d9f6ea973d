// RUN: grove-opt %s -split-input-file --grove-lower-subgroup-reduce | FileCheck %s

// grove-lower-subgroup-reduce (LowerSubgroupReduce.cpp): a warp-wide
// reduction becomes five xor shuffles over 32 lanes, each followed by the
// reduction's combiner.
// CHECK-LABEL: gpu.func @sum
// CHECK-SAME: (%[[X:.*]]: f32,
// CHECK-NOT: gpu.subgroup_reduce
// CHECK: %[[R1:.*]], %{{.*}} = gpu.shuffle xor %[[X]], %c1_i32, %c32_i32 : f32
// CHECK-NEXT: %[[S1:.*]] = arith.addf %[[X]], %[[R1]] : f32
// CHECK-NEXT: %[[R2:.*]], %{{.*}} = gpu.shuffle xor %[[S1]], %c2_i32, %c32_i32 : f32
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[S1]], %[[R2]] : f32
// CHECK-COUNT-3: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// CHECK: memref.store
gpu.module @kernels {
  gpu.func @sum(%x: f32, %out: memref<f32>) kernel {
    %r = gpu.subgroup_reduce add %x uniform : (f32) -> f32
    memref.store %r, %out[] : memref<f32>
    gpu.return
  }
}

// -----

// A bf16 value travels packed in an i32 (bitcast, zero-extend, shuffle,
// truncate, bitcast back): exact.
// CHECK-LABEL: gpu.func @max_bf16
// CHECK: %[[B:.*]] = arith.bitcast %{{.*}} : bf16 to i16
// CHECK-NEXT: %[[W:.*]] = arith.extui %[[B]] : i16 to i32
// CHECK-NEXT: %[[R:.*]], %{{.*}} = gpu.shuffle xor %[[W]], %c1_i32, %c32_i32 : i32
// CHECK-NEXT: %[[N:.*]] = arith.trunci %[[R]] : i32 to i16
// CHECK-NEXT: %[[V:.*]] = arith.bitcast %[[N]] : i16 to bf16
// CHECK-NEXT: arith.maximumf %{{.*}}, %[[V]] : bf16
// CHECK-COUNT-4: gpu.shuffle xor
// CHECK-NOT: gpu.subgroup_reduce
gpu.module @kernels {
  gpu.func @max_bf16(%x: bf16, %out: memref<bf16>) kernel {
    %r = gpu.subgroup_reduce maximumf %x uniform : (bf16) -> bf16
    memref.store %r, %out[] : memref<bf16>
    gpu.return
  }
}

// -----

// An f64 value (reference checks on the GPU) takes each step as two 32-bit
// shuffles of its halves.
// CHECK-LABEL: gpu.func @sum_f64
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : f64 to i64
// CHECK: %[[LO:.*]] = arith.trunci %[[BITS]] : i64 to i32
// CHECK: %[[HI64:.*]] = arith.shrui %[[BITS]], %{{.*}} : i64
// CHECK: %[[HI:.*]] = arith.trunci %[[HI64]] : i64 to i32
// CHECK: gpu.shuffle xor %[[LO]], %c1_i32, %c32_i32 : i32
// CHECK: gpu.shuffle xor %[[HI]], %c1_i32, %c32_i32 : i32
// CHECK: arith.addf %{{.*}}, %{{.*}} : f64
// CHECK-COUNT-8: gpu.shuffle xor
// CHECK-NOT: gpu.subgroup_reduce
gpu.module @kernels {
  gpu.func @sum_f64(%x: f64, %out: memref<f64>) kernel {
    %r = gpu.subgroup_reduce add %x uniform : (f64) -> f64
    memref.store %r, %out[] : memref<f64>
    gpu.return
  }
}

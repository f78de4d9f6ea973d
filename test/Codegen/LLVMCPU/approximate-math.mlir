// RUN: grove-opt %s -grove-approximate-math | FileCheck %s

// f32 tanh and erf, scalar or vector, become upstream's rational
// approximations (arithmetic LLVM vectorizes); f64 keeps its libm calls.
// CHECK-LABEL: func.func @f32
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK: arith.divf
func.func @f32(%x: f32, %v: vector<8xf32>) -> (f32, vector<8xf32>, f32, vector<8xf32>) {
  %a = math.tanh %x : f32
  %b = math.tanh %v : vector<8xf32>
  %c = math.erf %x : f32
  %d = math.erf %v : vector<8xf32>
  return %a, %b, %c, %d : f32, vector<8xf32>, f32, vector<8xf32>
}

// CHECK-LABEL: func.func @f64
// CHECK: math.tanh %{{.*}} : f64
// CHECK: math.erf %{{.*}} : f64
func.func @f64(%x: f64) -> (f64, f64) {
  %a = math.tanh %x : f64
  %b = math.erf %x : f64
  return %a, %b : f64, f64
}

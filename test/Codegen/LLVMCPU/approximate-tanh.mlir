// RUN: grove-opt %s -grove-approximate-tanh | FileCheck %s

// f32 tanh, scalar or vector, becomes upstream's rational approximation
// (arithmetic LLVM vectorizes); f64 keeps its libm call.
// CHECK-LABEL: func.func @f32
// CHECK-NOT: math.tanh
// CHECK: arith.divf
func.func @f32(%x: f32, %v: vector<8xf32>) -> (f32, vector<8xf32>) {
  %a = math.tanh %x : f32
  %b = math.tanh %v : vector<8xf32>
  return %a, %b : f32, vector<8xf32>
}

// CHECK-LABEL: func.func @f64
// CHECK: math.tanh %{{.*}} : f64
func.func @f64(%x: f64) -> f64 {
  %a = math.tanh %x : f64
  return %a : f64
}

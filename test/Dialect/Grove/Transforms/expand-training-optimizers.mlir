// RUN: grove-opt %s -split-input-file --grove-expand-training-ops | FileCheck %s

// Adagrad's accumulator starts at initial_accumulator_value; the rate
// decays as lr / (1 + (t - 1) lr_decay), the factor in f64 from the i64
// step count; the step divides by √s + ε.
// CHECK: grove.param @adagrad.step : tensor<i64> = 0 : i64
// CHECK: grove.param @w.adagrad.sum : tensor<4xf32> = 2.500000e-01 : f32
// CHECK-LABEL: func.func @adagrad
// CHECK-SAME: (%[[G:.*]]: tensor<4xf32>)
// CHECK: %[[T:.*]] = tensor.from_elements %{{.*}} : tensor<f64>
// CHECK: %[[S0:.*]] = grove.get_param @w.adagrad.sum
// CHECK: %[[SQ:.*]] = grove.mul %[[G]], %[[G]]
// CHECK: %[[S:.*]] = grove.add %[[S0]], %[[SQ]]
// CHECK: grove.set_param @w.adagrad.sum = %[[S]]
// CHECK: %[[TM1:.*]] = grove.sub %[[T]], %{{.*}} : (tensor<f64>, tensor<f64>)
// CHECK: %[[FACTOR:.*]] = grove.convert %{{.*}} : tensor<f64> -> tensor<f32>
// CHECK: %[[ROOT:.*]] = grove.sqrt %[[S]]
// CHECK: %[[STD:.*]] = grove.add %[[ROOT]], %{{.*}}
// CHECK: grove.div %[[G]], %[[STD]]
// CHECK: grove.set_param @w =
module {
  grove.param @w : tensor<4xf32>
  func.func @adagrad(%g: tensor<4xf32>) {
    grove.adagrad [@w] (%g) {lr = 0.1 : f64, lr_decay = 0.5 : f64, initial_accumulator_value = 0.25 : f64} : tensor<4xf32>
    return
  }
}

// -----

// LAMB without weight decay (and without nvlamb) takes no trust ratio, as
// Apex; with decay the rate is chosen by select where both norms are
// non-zero.
// CHECK-LABEL: func.func @lamb_plain
// CHECK-NOT: grove.select
// CHECK: grove.set_param @w =
// CHECK-LABEL: func.func @lamb
// CHECK: %[[P:.*]] = grove.get_param @w : tensor<4xf32>
// CHECK: %[[PP:.*]] = grove.mul %[[P]], %[[P]]
// CHECK: %[[PN2:.*]] = grove.reduce_sum %[[PP]]
// CHECK: %[[PN:.*]] = grove.sqrt %[[PN2]]
// CHECK: %[[UN:.*]] = grove.sqrt
// CHECK: %[[A:.*]] = grove.step %[[PN]]
// CHECK: %[[B:.*]] = grove.step %[[UN]]
// CHECK: %[[BOTH:.*]] = grove.mul %[[A]], %[[B]]
// CHECK: %[[Q:.*]] = grove.div %[[PN]], %[[UN]]
// CHECK: %[[TRUST:.*]] = grove.mul %[[LR:.*]], %[[Q]]
// CHECK: %[[R:.*]] = grove.select %[[BOTH]], %[[TRUST]], %[[LR]]
// CHECK: %[[D:.*]] = grove.mul %[[R]], %{{.*}}
// CHECK: %[[NEW:.*]] = grove.sub %[[P]], %[[D]]
// CHECK: grove.set_param @w = %[[NEW]]
module {
  grove.param @w : tensor<4xf32>
  func.func @lamb_plain(%g: tensor<4xf32>) {
    grove.lamb [@w] (%g) {name = "plain", weight_decay = 0.0 : f64} : tensor<4xf32>
    return
  }
  func.func @lamb(%g: tensor<4xf32>) {
    grove.lamb [@w] (%g) {lr = 0.1 : f64} : tensor<4xf32>
    return
  }
}

// -----

// LANS normalises the gradient by its norm where the norm is non-zero,
// and updates with two trust ratios, β1 r_m u_m + (1 - β1) r_g u_g.
// CHECK-LABEL: func.func @lans
// CHECK-SAME: (%[[G:.*]]: tensor<4xf32>)
// CHECK: %[[GG:.*]] = grove.mul %[[G]], %[[G]]
// CHECK: %[[GN2:.*]] = grove.reduce_sum %[[GG]]
// CHECK: %[[GN:.*]] = grove.sqrt %[[GN2]]
// CHECK: %[[SHIFT:.*]] = grove.add %[[GN]], %{{.*}}
// CHECK: %[[UNIT:.*]] = grove.div %[[G]], %[[SHIFT]]
// CHECK: %[[NZ:.*]] = grove.step %[[GN]]
// CHECK: %[[HAT:.*]] = grove.select %[[NZ]], %[[UNIT]], %[[G]]
// CHECK: grove.set_param @w.lans.m
// CHECK: grove.set_param @w.lans.v
// CHECK-COUNT-2: grove.select
// CHECK: %[[P1:.*]] = grove.sub %{{.*}}, %{{.*}}
// CHECK: %[[P2:.*]] = grove.sub %[[P1]], %{{.*}}
// CHECK: grove.set_param @w = %[[P2]]
module {
  grove.param @w : tensor<4xf32>
  func.func @lans(%g: tensor<4xf32>) {
    grove.lans [@w] (%g) {lr = 0.1 : f64} : tensor<4xf32>
    return
  }
}

// -----

// AdaAlter divides by the denominator as it was (so g² never enters its
// own step), accumulates g², and with a period refreshes the denominator
// where t - H ⌊t / H⌋ is 0; with period 1 the accumulator is the
// denominator and no second slot exists.
// CHECK-NOT: grove.param @w.once.denominator
// CHECK: grove.param @w.adaalter.denominator
// CHECK-LABEL: func.func @alter
// CHECK-SAME: (%[[G:.*]]: tensor<4xf32>)
// CHECK: %[[T:.*]] = tensor.from_elements %{{.*}} : tensor<f64>
// CHECK: %[[ACC0:.*]] = grove.get_param @w.adaalter.accumulator
// CHECK: %[[DEN0:.*]] = grove.get_param @w.adaalter.denominator
// CHECK: %[[SHIFTED:.*]] = grove.add %[[DEN0]], %{{.*}}
// CHECK: %[[ROOT:.*]] = grove.sqrt %[[SHIFTED]]
// CHECK: grove.div %[[G]], %[[ROOT]]
// CHECK: grove.set_param @w =
// CHECK: %[[SQ:.*]] = grove.mul %[[G]], %[[G]]
// CHECK: %[[ACC:.*]] = grove.add %[[ACC0]], %[[SQ]]
// CHECK: grove.set_param @w.adaalter.accumulator = %[[ACC]]
// CHECK: %[[Q:.*]] = grove.div %[[T]], %{{.*}}
// CHECK: %[[FL:.*]] = grove.floor %[[Q]]
// CHECK: %[[SYNC64:.*]] = grove.step %{{.*}} : tensor<f64>
// CHECK: %[[SYNC:.*]] = grove.convert %[[SYNC64]] : tensor<f64> -> tensor<f32>
// CHECK: %[[DEN:.*]] = grove.select %[[SYNC]], %[[ACC]], %[[DEN0]]
// CHECK: grove.set_param @w.adaalter.denominator = %[[DEN]]
// CHECK-LABEL: func.func @once
// CHECK: %[[ACC0:.*]] = grove.get_param @w.once.accumulator
// CHECK: grove.add %[[ACC0]], %{{.*}}
// CHECK-NOT: grove.floor
// CHECK: return
module {
  grove.param @w : tensor<4xf32>
  func.func @alter(%g: tensor<4xf32>) {
    grove.adaalter [@w] (%g) {lr = 0.1 : f64, period = 4} : tensor<4xf32>
    return
  }
  func.func @once(%g: tensor<4xf32>) {
    grove.adaalter [@w] (%g) {name = "once"} : tensor<4xf32>
    return
  }
}

// -----

// With a warm-up of W fully synchronous steps the denominator catches up
// where u = max(t - W, 0) is a multiple of the period: every step up to W
// (u = 0, as with period 1), then every H-th counted from W. In f64, from
// the exact count, and narrowed once.
// CHECK-LABEL: func.func @warm
// CHECK: %[[T:.*]] = tensor.from_elements %{{.*}} : tensor<f64>
// CHECK: %[[ACC:.*]] = grove.add %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<4xf32>)
// CHECK: grove.set_param @w.adaalter.accumulator = %[[ACC]]
// CHECK: %[[ZERO:.*]] = grove.constant dense<0.000000e+00> : tensor<f64>
// CHECK: %[[W:.*]] = grove.constant dense<3.000000e+00> : tensor<f64>
// CHECK: %[[SINCE:.*]] = grove.sub %[[T]], %[[W]] : (tensor<f64>, tensor<f64>)
// CHECK: %[[U:.*]] = grove.max %[[SINCE]], %[[ZERO]]
// CHECK: %[[Q:.*]] = grove.div %[[U]], %{{.*}} : (tensor<f64>, tensor<f64>)
// CHECK: %[[FL:.*]] = grove.floor %[[Q]] : tensor<f64>
// CHECK: %[[HF:.*]] = grove.mul %{{.*}}, %[[FL]]
// CHECK: %[[REST:.*]] = grove.sub %[[U]], %[[HF]]
// CHECK: %[[SYNC64:.*]] = grove.step %{{.*}} : tensor<f64>
// CHECK: %[[SYNC:.*]] = grove.convert %[[SYNC64]] : tensor<f64> -> tensor<f32>
// CHECK: %[[DEN:.*]] = grove.select %[[SYNC]], %[[ACC]], %{{.*}}
// CHECK: grove.set_param @w.adaalter.denominator = %[[DEN]]
module {
  grove.param @w : tensor<4xf32>
  func.func @warm(%g: tensor<4xf32>) {
    grove.adaalter [@w] (%g) {lr = 0.1 : f64, period = 4, sync_warmup_steps = 3} : tensor<4xf32>
    return
  }
}

// -----

// Schedules: warm-up is a select on step(W - t) between lr t / W and the
// decayed rate; the cosine takes cos(π q) with q = min(1, max(t - W, 0) /
// (T - W)); step decay is lr exp(⌊(t - W) / size⌋ log γ).
// CHECK-LABEL: func.func @cosine
// CHECK-SAME: (%[[T:.*]]: tensor<f32>)
// CHECK: %[[SINCE:.*]] = grove.sub %[[T]], %{{.*}}
// CHECK: %[[POS:.*]] = grove.max %[[SINCE]], %{{.*}}
// CHECK: %[[FRAC:.*]] = grove.div %[[POS]], %{{.*}}
// CHECK: %[[Q:.*]] = grove.min %[[FRAC]], %{{.*}}
// CHECK: %[[ANGLE:.*]] = grove.mul %{{.*}}, %[[Q]]
// CHECK: grove.cos %[[ANGLE]]
// CHECK: %[[WARM:.*]] = grove.step
// CHECK: %[[RAMP:.*]] = grove.mul %{{.*}}, %[[T]]
// CHECK: %[[LR:.*]] = grove.select %[[WARM]], %[[RAMP]], %{{.*}}
// CHECK: return %[[LR]]
// CHECK-LABEL: func.func @step_decay
// CHECK: grove.floor
// CHECK: grove.constant dense<-0.69314718
// CHECK: grove.exp
// CHECK-NOT: grove.select
// CHECK: return
func.func @cosine(%t: tensor<f32>) -> tensor<f32> {
  %lr = grove.lr_schedule cosine %t {lr = 0.1 : f64, warmup_steps = 5, total_steps = 50} : tensor<f32> -> tensor<f32>
  return %lr : tensor<f32>
}
func.func @step_decay(%t: tensor<f64>) -> tensor<f64> {
  %lr = grove.lr_schedule step_decay %t {lr = 0.1 : f64, step_size = 10, gamma = 0.5 : f64} : tensor<f64> -> tensor<f64>
  return %lr : tensor<f64>
}

// -----

// Master weights: bf16 params updated through f32 copies. The gradient is
// widened; the copy is the param widened on the first step (step count 0)
// and the state after; the moments are f32; the copy is written and the
// param is the copy rounded.
// CHECK: grove.param @w.sgd.master : tensor<4xf32> = 0.000000e+00 : f32
// CHECK: grove.param @w.sgd.momentum : tensor<4xf32> = 0.000000e+00 : f32
// CHECK-LABEL: func.func @master
// CHECK: %[[T0:.*]] = grove.get_param @sgd.step : tensor<i64>
// CHECK: %[[G:.*]] = grove.convert %arg0 : tensor<4xbf16> -> tensor<4xf32>
// CHECK: %[[ZERO:.*]] = arith.cmpi eq
// CHECK: %[[FIRSTF:.*]] = arith.uitofp %[[ZERO]] : i1 to f32
// CHECK: %[[FIRST:.*]] = tensor.from_elements %[[FIRSTF]] : tensor<f32>
// CHECK: %[[P:.*]] = grove.get_param @w : tensor<4xbf16>
// CHECK: %[[PW:.*]] = grove.convert %[[P]] : tensor<4xbf16> -> tensor<4xf32>
// CHECK: %[[M:.*]] = grove.get_param @w.sgd.master : tensor<4xf32>
// CHECK: %[[W:.*]] = grove.select %[[FIRST]], %[[PW]], %[[M]]
// CHECK: grove.get_param @w.sgd.momentum : tensor<4xf32>
// CHECK: %[[NEW:.*]] = grove.sub %[[W]], %{{.*}} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: grove.set_param @w.sgd.master = %[[NEW]] : tensor<4xf32>
// CHECK: %[[R:.*]] = grove.convert %[[NEW]] : tensor<4xf32> -> tensor<4xbf16>
// CHECK: grove.set_param @w = %[[R]] : tensor<4xbf16>
grove.param @w : tensor<4xbf16>
func.func @master(%g: tensor<4xbf16>) {
  grove.sgd [@w] (%g) {lr = 0.1 : f64, momentum = 0.9 : f64, master_weights} : tensor<4xbf16>
  return
}

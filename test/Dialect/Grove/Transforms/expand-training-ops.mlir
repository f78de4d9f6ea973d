// RUN: grove-opt %s -split-input-file --grove-expand-training-ops | FileCheck %s

// grove-expand-training-ops (ExpandTrainingOps.cpp). Optimizer state is
// declared zero-initialised after the last param, except what the module
// declares itself (@w.adam.v); every optimizer counts its steps; SGD's
// momentum buffer is updated and written before the param; the step count
// is an i64, and Adam corrects the moments' bias through exp(t log beta)
// in f64 from it, rounded to f32 once: the step size lr / (1 - β1^t) (the
// learning-rate operand widened) and the rank-0 1/√(1 - β2^t) √v is
// multiplied by (one division per step, not per element).
// CHECK: grove.param @w : tensor<4xf32>
// CHECK-NEXT: grove.param @w.adam.v : tensor<4xf32> = 0.000000e+00 : f32
// CHECK-NEXT: grove.param @sgd.step : tensor<i64> = 0 : i64
// CHECK-NEXT: grove.param @w.sgd.momentum : tensor<4xf32> = 0.000000e+00 : f32
// CHECK-NEXT: grove.param @adam.step : tensor<i64> = 0 : i64
// CHECK-NEXT: grove.param @w.adam.m : tensor<4xf32> = 0.000000e+00 : f32
// CHECK-LABEL: func.func @steps
// CHECK-SAME: (%[[G:.*]]: tensor<4xf32>, %[[LR:.*]]: tensor<f32>)
// CHECK-NOT: grove.sgd
// CHECK: %[[S0:.*]] = grove.get_param @sgd.step : tensor<i64>
// CHECK: %[[S0V:.*]] = tensor.extract %[[S0]][] : tensor<i64>
// CHECK: %[[SV:.*]] = arith.addi %[[S0V]], %{{.*}} : i64
// CHECK: %[[S:.*]] = tensor.from_elements %[[SV]] : tensor<i64>
// CHECK: grove.set_param @sgd.step = %[[S]]
// CHECK: %[[HALF:.*]] = grove.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[P:.*]] = grove.get_param @w : tensor<4xf32>
// CHECK: %[[BUF:.*]] = grove.get_param @w.sgd.momentum
// CHECK: %[[MB:.*]] = grove.mul %{{.*}}, %[[BUF]]
// CHECK: %[[NEWBUF:.*]] = grove.add %[[MB]], %[[G]]
// CHECK: grove.set_param @w.sgd.momentum = %[[NEWBUF]]
// CHECK: %[[STEP:.*]] = grove.mul %[[HALF]], %[[NEWBUF]]
// CHECK: %[[NEWP:.*]] = grove.sub %[[P]], %[[STEP]]
// CHECK: grove.set_param @w = %[[NEWP]]
// CHECK-NOT: grove.adam
// CHECK: %[[T0:.*]] = grove.get_param @adam.step : tensor<i64>
// CHECK: %[[TV:.*]] = arith.addi %{{.*}}, %{{.*}} : i64
// CHECK: %[[T:.*]] = tensor.from_elements %[[TV]] : tensor<i64>
// CHECK: %[[TF:.*]] = arith.sitofp %[[TV]] : i64 to f64
// CHECK: %[[T64:.*]] = tensor.from_elements %[[TF]] : tensor<f64>
// CHECK: grove.set_param @adam.step = %[[T]]
// CHECK: grove.set_param @w.adam.m =
// CHECK: grove.set_param @w.adam.v =
// CHECK: %[[LR64:.*]] = grove.convert %[[LR]] : tensor<f32> -> tensor<f64>
// CHECK: %[[LOGB1:.*]] = grove.constant dense<-0.69314718055994529> : tensor<f64>
// CHECK: grove.mul %[[T64]], %[[LOGB1]]
// CHECK: %[[C1:.*]] = grove.sub %{{.*}}, %{{.*}} : (tensor<f64>, tensor<f64>) -> tensor<f64>
// CHECK: %[[STEP64:.*]] = grove.div %[[LR64]], %[[C1]]
// CHECK: %[[STEPSIZE:.*]] = grove.convert %[[STEP64]] : tensor<f64> -> tensor<f32>
// CHECK: %[[ROOTC2:.*]] = grove.sqrt %{{.*}} : tensor<f64>
// CHECK: %[[INVC2W:.*]] = grove.div %{{.*}}, %[[ROOTC2]] : (tensor<f64>, tensor<f64>) -> tensor<f64>
// CHECK: %[[INVC2:.*]] = grove.convert %[[INVC2W]] : tensor<f64> -> tensor<f32>
// CHECK: %[[ROOTV:.*]] = grove.sqrt %{{.*}} : tensor<4xf32>
// CHECK: %[[SCALED:.*]] = grove.mul %[[ROOTV]], %[[INVC2]] : (tensor<4xf32>, tensor<f32>)
// CHECK: %[[DENOM:.*]] = grove.add %[[SCALED]], %{{.*}}
// CHECK: %[[RATIO:.*]] = grove.div %{{.*}}, %[[DENOM]] : (tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[UPD:.*]] = grove.mul %[[STEPSIZE]], %[[RATIO]]
// CHECK: grove.sub %{{.*}}, %[[UPD]]
// CHECK: grove.set_param @w =

// The cross-entropy: the smoothed target (0.8 one_hot + 0.02) against
// log_softmax, summed per row, the negated mean. Its labels, an argument,
// get the class count as their bound (the runtime checks it).
// CHECK-LABEL: func.func @ce
// CHECK-SAME: %{{.*}}: tensor<?xi64> {grove.below = 10 : i64}
// CHECK: %[[LOGP:.*]] = grove.log_softmax %{{.*}} {axis = 1 : i64}
// CHECK: %[[OH:.*]] = grove.one_hot %{{.*}} : tensor<?xi64> -> tensor<?x10xf32>
// CHECK: grove.constant dense<8.000000e-01>
// CHECK: grove.constant dense<2.000000e-02>
// CHECK: %[[TGT:.*]] = grove.add
// CHECK: %[[PROD:.*]] = grove.mul %[[TGT]], %[[LOGP]]
// CHECK: %[[ROWS:.*]] = grove.reduce_sum %[[PROD]] {axes = array<i64: 1>}
// CHECK: %[[MEAN:.*]] = grove.reduce_mean %[[ROWS]] {axes = array<i64: 0>}
// CHECK: %[[NEG:.*]] = grove.constant dense<-1.000000e+00>
// CHECK: %[[L:.*]] = grove.mul %[[MEAN]], %[[NEG]]
// CHECK: return %[[L]]
module {
  grove.param @w : tensor<4xf32>
  grove.param @w.adam.v : tensor<4xf32> = 0.0 : f32
  func.func @steps(%g: tensor<4xf32>, %lr: tensor<f32>) {
    grove.sgd [@w] (%g) {lr = 0.5 : f64, momentum = 0.9 : f64} : tensor<4xf32>
    grove.adam [@w] (%g) lr(%lr : tensor<f32>) {beta1 = 0.5 : f64} : tensor<4xf32>
    return
  }
  func.func @ce(%z: tensor<?x10xf32>, %y: tensor<?xi64>) -> tensor<f32> {
    %l = grove.softmax_cross_entropy %z, %y {label_smoothing = 0.2 : f64} : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// With skip_nonfinite every write keeps the old value unless all gradients
// are finite (a NaN-safe select on step(1 + sum(g * 0))), and a skipped
// step is counted; max_grad_norm scales the gradients by min(1, max /
// (norm + 1e-6)) first.
// CHECK-LABEL: grove.param @sgd.skipped : tensor<i64> = 0 : i64
// CHECK-LABEL: func.func @guarded
// CHECK-SAME: (%[[G:.*]]: tensor<4xf32>)
// CHECK: %[[Z:.*]] = grove.mul %[[G]], %{{.*}} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK: %[[POISON:.*]] = grove.reduce_sum %[[Z]]
// CHECK: %[[ONE:.*]] = grove.add %[[POISON]], %{{.*}}
// CHECK: %[[OK:.*]] = grove.step %[[ONE]] : tensor<f32>
// CHECK: %[[SQ:.*]] = grove.mul %[[G]], %[[G]]
// CHECK: %[[NORM2:.*]] = grove.reduce_sum %[[SQ]]
// CHECK: %[[NORM:.*]] = grove.sqrt %[[NORM2]]
// CHECK: %[[COEF:.*]] = grove.div
// CHECK: %[[SCALE:.*]] = grove.min %[[COEF]], %{{.*}}
// CHECK: %[[CLIPPED:.*]] = grove.mul %[[G]], %[[SCALE]]
// CHECK: %[[P:.*]] = grove.get_param @w
// CHECK: %[[NEW:.*]] = grove.sub %[[P]], %{{.*}}
// CHECK: %[[KEPT:.*]] = grove.select %[[OK]], %[[NEW]], %[[P]]
// CHECK: grove.set_param @w = %[[KEPT]]
// CHECK: grove.get_param @sgd.skipped
// CHECK: grove.set_param @sgd.skipped =
module {
  grove.param @w : tensor<4xf32>
  func.func @guarded(%g: tensor<4xf32>) {
    grove.sgd [@w] (%g) {lr = 0.5 : f64, max_grad_norm = 1.0 : f64, skip_nonfinite} : tensor<4xf32>
    return
  }
}

// -----

// batch_norm_training: the batch mean and biased variance over every
// dimension but 1, the inference form over them, and the running
// statistics' update with momentum (the variance times n / (n - 1), here
// the constant 8 / 7).
// CHECK-LABEL: func.func @bn
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[S:.*]]: tensor<3xf32>)
// CHECK: %[[MEAN:.*]] = grove.reduce_mean %[[X]] {axes = array<i64: 0, 2>}
// CHECK: %[[COL:.*]] = grove.reshape %[[MEAN]] : tensor<3xf32> -> tensor<3x1xf32>
// CHECK: %[[C:.*]] = grove.sub %[[X]], %[[COL]]
// CHECK: %[[SQ:.*]] = grove.mul %[[C]], %[[C]]
// CHECK: %[[VAR:.*]] = grove.reduce_mean %[[SQ]] {axes = array<i64: 0, 2>}
// CHECK: %[[Y:.*]] = grove.batch_norm %[[X]], %[[S]], %[[S]], %[[MEAN]], %[[VAR]] {epsilon = 1.000000e-05 : f64}
// CHECK: grove.constant dense<1.14285719> : tensor<f32>
// CHECK: %[[RM:.*]] = grove.get_param @rm
// CHECK: grove.constant dense<0.899999976>
// CHECK: grove.set_param @rm =
// CHECK: %[[RV:.*]] = grove.get_param @rv
// CHECK: grove.set_param @rv =
// CHECK: return %[[Y]]
module {
  grove.param @rm : tensor<3xf32> = 0.0 : f32
  grove.param @rv : tensor<3xf32> = 1.0 : f32
  func.func @bn(%x: tensor<2x3x4xf32>, %s: tensor<3xf32>) -> tensor<2x3x4xf32> {
    %y = grove.batch_norm_training %x, %s, %s {running_mean = @rm, running_var = @rv} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
}

// -----

// With a dynamic batch, n comes from the run-time size (n = 4 · N), not
// from another pass over the input; a run-time check fails the call where
// n < 2 (no unbiased variance).
// CHECK-LABEL: func.func @bn_dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<?x3x4xf32>
// CHECK: %[[ROWS:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x3x4xf32>
// CHECK: %[[PER:.*]] = arith.muli %[[ROWS]], %{{.*}} : index
// CHECK: %[[LEAST:.*]] = arith.maxsi %[[PER]], %{{.*}} : index
// CHECK: grove.agree_dims %[[LEAST]], %[[PER]], "expand-training-ops.mlir:{{[0-9]+}}:{{[0-9]+}}: grove.batch_norm_training: values per channel" {at_least} : index
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x3x4xf32>
// CHECK: %[[NF:.*]] = tensor.from_elements %{{.*}} : tensor<f32>
// CHECK: %[[COUNT:.*]] = grove.mul %[[NF]], %{{.*}}
// CHECK: %[[LESS:.*]] = grove.sub %[[COUNT]], %{{.*}}
// CHECK: %[[BESSEL:.*]] = grove.div %[[COUNT]], %[[LESS]]
// CHECK: grove.set_param @rm =
// CHECK: grove.mul %{{.*}}, %[[BESSEL]]
// CHECK: grove.set_param @rv =
module {
  grove.param @rm : tensor<3xf32> = 0.0 : f32
  grove.param @rv : tensor<3xf32> = 1.0 : f32
  func.func @bn_dynamic(%x: tensor<?x3x4xf32>, %s: tensor<3xf32>) -> tensor<?x3x4xf32> {
    %y = grove.batch_norm_training %x, %s, %s {running_mean = @rm, running_var = @rv} : (tensor<?x3x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3x4xf32>
    return %y : tensor<?x3x4xf32>
  }
}

// -----

// A max pool whose gradient follows it in the block gives the gradient its
// winners: one max_pool2d_with_indices, read by max_pool2d_grad, for two
// gradients of it; a pool without a gradient, and a gradient without its
// pool, are left alone.
// CHECK-LABEL: func.func @pool_winners
// CHECK: %[[Y:.*]], %[[I:.*]] = grove.max_pool2d_with_indices %[[X:.*]] {kernel = array<i64: 2, 2>
// CHECK: grove.max_pool2d %[[X]] {kernel = array<i64: 3, 3>
// CHECK: grove.max_pool2d_grad %[[X]], %{{.*}} indices %[[I]]
// CHECK: grove.max_pool2d_grad %[[X]], %{{.*}} indices %[[I]]
// CHECK: grove.max_pool2d_grad %[[X]], %{{.*}} {kernel = array<i64: 3, 3>
// CHECK-SAME: -> tensor<?x3x8x8xf32>
// CHECK: return %[[Y]]
func.func @pool_winners(%x: tensor<?x3x8x8xf32>, %dy: tensor<?x3x4x4xf32>, %dz: tensor<?x3x3x3xf32>) -> (tensor<?x3x4x4xf32>, tensor<?x3x3x3xf32>, tensor<?x3x8x8xf32>, tensor<?x3x8x8xf32>, tensor<?x3x8x8xf32>) {
  %y = grove.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<?x3x8x8xf32>) -> tensor<?x3x4x4xf32>
  %z = grove.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<?x3x8x8xf32>) -> tensor<?x3x3x3xf32>
  %d1 = grove.max_pool2d_grad %x, %dy {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<?x3x8x8xf32>, tensor<?x3x4x4xf32>) -> tensor<?x3x8x8xf32>
  %d2 = grove.max_pool2d_grad %x, %dy {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<?x3x8x8xf32>, tensor<?x3x4x4xf32>) -> tensor<?x3x8x8xf32>
  %d3 = grove.max_pool2d_grad %x, %dy {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<?x3x8x8xf32>, tensor<?x3x4x4xf32>) -> tensor<?x3x8x8xf32>
  return %y, %z, %d1, %d2, %d3 : tensor<?x3x4x4xf32>, tensor<?x3x3x3xf32>, tensor<?x3x8x8xf32>, tensor<?x3x8x8xf32>, tensor<?x3x8x8xf32>
}

// -----

// A skipping optimizer keeps every other state write of its function too:
// the running statistics move to the end, where the optimizer's verdict
// (ok) is known, and keep their old values where it is 0; a read after the
// write still reads the value written.
// CHECK-LABEL: func.func @skip_guards_state
// CHECK: grove.get_param @rm : tensor<3xf32>
// CHECK: %[[NEWM:.*]] = grove.add
// CHECK-NEXT: %[[OLDM:.*]] = grove.get_param @rm : tensor<3xf32>
// CHECK-NOT: grove.set_param @rm
// CHECK: %[[OK:.*]] = grove.step
// CHECK: grove.set_param @w =
// CHECK: grove.set_param @sgd.skipped =
// CHECK: %[[KEPTM:.*]] = grove.select %[[OK]], %[[NEWM]], %[[OLDM]]
// CHECK: grove.set_param @rm = %[[KEPTM]]
// CHECK: grove.select %[[OK]]
// CHECK: grove.set_param @rv =
// CHECK-NEXT: return
module {
  grove.param @w : tensor<3xf32>
  grove.param @rm : tensor<3xf32> = 0.0 : f32
  grove.param @rv : tensor<3xf32> = 1.0 : f32
  func.func @skip_guards_state(%x: tensor<2x3xf32>, %g: tensor<3xf32>) -> tensor<2x3xf32> {
    %y = grove.batch_norm_training %x, %g, %g {running_mean = @rm, running_var = @rv} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    grove.sgd [@w] (%g) {lr = 0.5 : f64, skip_nonfinite} : tensor<3xf32>
    return %y : tensor<2x3xf32>
  }
}

// -----

// A loss over an empty batch fails the call instead of stepping on a NaN.
// CHECK-LABEL: func.func @empty_batch
// CHECK-SAME: (%[[Z:[^:]*]]: tensor<?x4xf32>
// CHECK: %[[N:.*]] = tensor.dim %[[Z]], %{{.*}} : tensor<?x4xf32>
// CHECK: %[[LEAST:.*]] = arith.maxsi %[[N]], %{{.*}} : index
// CHECK: grove.agree_dims %[[LEAST]], %[[N]], "{{.*}}: grove.softmax_cross_entropy: rows of the batch" {at_least} : index
// CHECK: %[[P:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x4xf32>
// CHECK: %[[PN:.*]] = arith.muli %[[P]], %{{.*}} : index
// CHECK: grove.agree_dims %{{.*}}, %[[PN]], "{{.*}}: grove.mse_loss: elements of the prediction" {at_least} : index
func.func @empty_batch(%z: tensor<?x4xf32>, %y: tensor<?xi32>, %p: tensor<?x4xf32>) -> (tensor<f32>, tensor<f32>) {
  %l = grove.softmax_cross_entropy %z, %y : (tensor<?x4xf32>, tensor<?xi32>) -> tensor<f32>
  %m = grove.mse_loss %p, %p : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<f32>
  return %l, %m : tensor<f32>, tensor<f32>
}

// -----

// grove.dropout reads its generator's seed and offset (declared here, i64
// zeros) and becomes the pure philox_dropout; the function advances the
// offset once at its end, whatever the number of draws; rate 0 draws
// nothing.
// CHECK: grove.param @dropout.seed : tensor<i64> = 0 : i64
// CHECK: grove.param @dropout.offset : tensor<i64> = 0 : i64
// CHECK-LABEL: func.func @drops
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
// CHECK: %[[S:.*]] = grove.get_param @dropout.seed : tensor<i64>
// CHECK: %[[O:.*]] = grove.get_param @dropout.offset : tensor<i64>
// CHECK: %[[Y:.*]] = grove.philox_dropout %[[X]], %[[S]], %[[O]] {rate = 1.000000e-01 : f64, stream = 0 : i64}
// CHECK: grove.philox_dropout %[[Y]], %{{.*}}, %{{.*}} {rate = 2.000000e-01 : f64, stream = 1 : i64}
// CHECK-NOT: grove.philox_dropout
// CHECK: %[[O2:.*]] = grove.get_param @dropout.offset : tensor<i64>
// CHECK: %[[OV:.*]] = tensor.extract %[[O2]][] : tensor<i64>
// CHECK: %[[NV:.*]] = arith.addi %[[OV]], %{{.*}} : i64
// CHECK: %[[N:.*]] = tensor.from_elements %[[NV]] : tensor<i64>
// CHECK: grove.set_param @dropout.offset = %[[N]]
// CHECK-NOT: grove.set_param
// CHECK: return
func.func @drops(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = grove.dropout %x {rate = 0.1 : f64, stream = 0} : tensor<?x4xf32>
  %z = grove.dropout %y {rate = 0.2 : f64, stream = 1} : tensor<?x4xf32>
  %w = grove.dropout %z {rate = 0.0 : f64, stream = 2} : tensor<?x4xf32>
  return %w : tensor<?x4xf32>
}

// -----

// Embedding ids that are an argument are bounded by the table's rows, also
// through a call: the entry's argument the callee's ids come from. An
// unchecked lookup's (one_hot @ table canonicalized) are not.
// CHECK-LABEL: func.func private @lookup
// CHECK-SAME: {grove.below = 10 : i64}
// CHECK-LABEL: func.func @called
// CHECK-SAME: {grove.below = 10 : i64, grove.name = "ids"}
// CHECK-LABEL: func.func @unbounded
// CHECK-NOT: grove.below
// CHECK-LABEL: func.func @unchecked
// CHECK-NOT: grove.below
// CHECK: return
module {
  grove.param @t : tensor<10x4xf32>
  func.func private @lookup(%ids: tensor<?xi32>) -> tensor<?x4xf32> {
    %t = grove.get_param @t : tensor<10x4xf32>
    %e = grove.embedding %t, %ids : (tensor<10x4xf32>, tensor<?xi32>) -> tensor<?x4xf32>
    return %e : tensor<?x4xf32>
  }
  func.func @called(%ids: tensor<?xi32> {grove.name = "ids"}) -> (tensor<?x4xf32> {grove.name = "y"}) {
    %e = func.call @lookup(%ids) : (tensor<?xi32>) -> tensor<?x4xf32>
    return %e : tensor<?x4xf32>
  }
  func.func @unbounded(%ids: tensor<?xi32>) -> tensor<?xi32> {
    return %ids : tensor<?xi32>
  }
  func.func @unchecked(%ids: tensor<?xi32>) -> tensor<?x4xf32> {
    %t = grove.get_param @t : tensor<10x4xf32>
    %e = grove.embedding %t, %ids {unchecked} : (tensor<10x4xf32>, tensor<?xi32>) -> tensor<?x4xf32>
    return %e : tensor<?x4xf32>
  }
}

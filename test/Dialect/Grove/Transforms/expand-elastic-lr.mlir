// RUN: grove-opt %s --grove-expand-training-ops | FileCheck %s

// grove.elastic_lr (ExpandTrainingOps.cpp): its state declared, the world
// read from the runtime, the ramp from the effective world so far, the
// state written, the rate scaled by the effective world / base_world.

// CHECK: grove.param @lr.world : tensor<f32> = 0.000000e+00 : f32
// CHECK: grove.param @lr.from : tensor<f32> = 0.000000e+00 : f32
// CHECK: grove.param @lr.steps : tensor<f32> = 0.000000e+00 : f32
// CHECK-LABEL: func.func @rate
// CHECK: %[[N:.*]] = grove.world_size : index
// CHECK: %[[W:.*]] = tensor.from_elements %{{.*}} : tensor<f32>
// CHECK: %[[PREV:.*]] = grove.get_param @lr.world
// CHECK: %[[FROM:.*]] = grove.get_param @lr.from
// CHECK: %[[STEPS:.*]] = grove.get_param @lr.steps
// CHECK: %[[RAMP:.*]] = grove.constant dense<1.000000e+02> : tensor<f32>
// CHECK: grove.div %[[STEPS]], %[[RAMP]]
// CHECK: grove.step %[[PREV]]
// CHECK: grove.select
// CHECK: grove.set_param @lr.world = %[[W]]
// CHECK: grove.set_param @lr.from =
// CHECK: grove.set_param @lr.steps =
// CHECK: %[[BASE:.*]] = grove.constant dense<4.000000e+00> : tensor<f32>
// CHECK: %[[SCALE:.*]] = grove.div %{{.*}}, %[[BASE]]
// CHECK: %[[LR:.*]] = grove.mul %{{.*}}, %[[SCALE]]
// CHECK: return %[[LR]]
func.func @rate(%lr: tensor<f32>) -> tensor<f32> {
  %r = grove.elastic_lr %lr {base_world = 4, ramp_steps = 100, name = "lr"} : tensor<f32>
  return %r : tensor<f32>
}

// RUN: grove-opt %s | grove-opt | FileCheck %s
// RUN: grove-opt %s --mlir-print-op-generic | grove-opt | FileCheck %s

// Round trip of the state ops and of the ABI attributes the dialect
// declares (verifier cases: state-invalid.mlir).

// CHECK: grove.param @w : tensor<2x3xf32>
// CHECK: grove.param @mean : tensor<4xf32> = 0.000000e+00 : f32
// CHECK: grove.param @step : tensor<i64> = 7 : i64
// CHECK: grove.param @half : tensor<2xbf16> = 1.500000e+00 : bf16
// CHECK: grove.param @mask : tensor<3xi1> = true
grove.param @w : tensor<2x3xf32>
grove.param @mean : tensor<4xf32> = 0.0 : f32
grove.param @step : tensor<i64> = 7 : i64
grove.param @half : tensor<2xbf16> = 1.5 : bf16
grove.param @mask : tensor<3xi1> = true

// CHECK-LABEL: func.func @update
// CHECK: %[[M:.*]] = grove.get_param @mean : tensor<4xf32>
// CHECK: grove.set_param @mean = %[[M]] : tensor<4xf32>
func.func @update() {
  %m = grove.get_param @mean : tensor<4xf32>
  grove.set_param @mean = %m : tensor<4xf32>
  return
}

// CHECK-LABEL: func.func @lowered
// CHECK-SAME: (%[[S:.*]]: tensor<4xf32> {grove.state = @mean, grove.writes}, %[[X:.*]]: tensor<4xf32> {grove.name = "x"})
// CHECK-SAME: -> (tensor<4xf32> {grove.name = "y"})
// CHECK-SAME: grove.abi.entry = 0 : i64, grove.abi.inputs = 1 : i64, grove.abi.name = "lowered"
// CHECK: grove.assign %[[X]] to %[[S]] : tensor<4xf32>
func.func @lowered(%s: tensor<4xf32> {grove.state = @mean, grove.writes},
                   %x: tensor<4xf32> {grove.name = "x"})
    -> (tensor<4xf32> {grove.name = "y"})
    attributes {grove.abi.entry = 0 : i64, grove.abi.inputs = 1 : i64,
                grove.abi.name = "lowered"} {
  grove.assign %x to %s : tensor<4xf32>
  return %s : tensor<4xf32>
}

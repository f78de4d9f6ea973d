// Two entries over initialised state and a bounded input, for the tests of
// the descriptor a library carries.
module {
  grove.param @count : tensor<f32> = 0.0 : f32

  func.func @bump(%labels: tensor<?xi32> {grove.name = "labels", grove.below = 10 : i64})
      -> tensor<?xi32> {
    %c = grove.get_param @count : tensor<f32>
    %one = arith.constant dense<1.0> : tensor<f32>
    %n = grove.add %c, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
    grove.set_param @count = %n : tensor<f32>
    return %labels : tensor<?xi32>
  }

  func.func @peek() -> tensor<f32> {
    %c = grove.get_param @count : tensor<f32>
    return %c : tensor<f32>
  }
}

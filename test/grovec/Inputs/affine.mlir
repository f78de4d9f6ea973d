// y = x @ w + b: a 2x2 weight and a bias, both grove.params. Shared by the
// grovec driver tests.
module @affine {
  grove.param @w : tensor<2x2xf32>
  grove.param @b : tensor<2xf32>
  func.func @affine(%x: tensor<?x2xf32> {grove.name = "x"})
      -> (tensor<?x2xf32> {grove.name = "y"}) {
    %w = grove.get_param @w : tensor<2x2xf32>
    %b = grove.get_param @b : tensor<2xf32>
    %m = grove.matmul %x, %w : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
    %y = grove.add %m, %b : (tensor<?x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    return %y : tensor<?x2xf32>
  }
}

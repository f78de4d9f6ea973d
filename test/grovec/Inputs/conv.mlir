// A grouped, padded 3x3 convolution (grovec's CUDA convolution options).
module @conv {
  func.func @forward(%x: tensor<?x8x14x14xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<?x16x14x14xf32> {
    %y = grove.conv2d %x, %w {groups = 2 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x8x14x14xf32>, tensor<16x4x3x3xf32>) -> tensor<?x16x14x14xf32>
    return %y : tensor<?x16x14x14xf32>
  }
}

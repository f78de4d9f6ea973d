// ResNeSt's stem max pool (3x3, stride 2, padding 1) on a smaller image.
module @max_pool {
  func.func @forward(%x: tensor<?x4x64x64xf32>) -> tensor<?x4x32x32xf32> {
    %y = grove.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<?x4x64x64xf32>) -> tensor<?x4x32x32xf32>
    return %y : tensor<?x4x32x32xf32>
  }
}

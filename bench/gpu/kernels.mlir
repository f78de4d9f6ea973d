// Kernels bench/gpu/run.py times on the GPU against PyTorch (eager and
// torch.compile), the device-to-device copy and cuBLAS. Compiled by
// scripts/gpu-check.sh prepare with grovec --target=cuda. The row length is
// static (4096), as a model's hidden size is: with both sizes dynamic the
// bias and the input would need a run-time size check, which keeps the
// chain from fusing today.
module @gpukernels {
  // Memory bound: bias add + GELU + scale by the input, fused into one
  // kernel (reads x once, writes y once).
  func.func @chain_f32(%x: tensor<?x4096xf32>, %b: tensor<4096xf32>) -> tensor<?x4096xf32> {
    %0 = grove.add %x, %b : (tensor<?x4096xf32>, tensor<4096xf32>) -> tensor<?x4096xf32>
    %1 = grove.gelu %0 : tensor<?x4096xf32>
    %2 = grove.mul %1, %x : (tensor<?x4096xf32>, tensor<?x4096xf32>) -> tensor<?x4096xf32>
    return %2 : tensor<?x4096xf32>
  }
  // Row softmax: reductions plus elementwise work.
  func.func @softmax_f32(%x: tensor<?x4096xf32>) -> tensor<?x4096xf32> {
    %0 = grove.softmax %x {axis = 1 : i64} : tensor<?x4096xf32>
    return %0 : tensor<?x4096xf32>
  }
  // GEMM bound: one cuBLAS call.
  func.func @gemm_f32(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
    %0 = grove.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    return %0 : tensor<?x?xf32>
  }
  // Memory bound: bias add + GELU + scale by the input, fused into one
  // kernel (reads x once, writes y once).
  func.func @chain_bf16(%x: tensor<?x4096xbf16>, %b: tensor<4096xbf16>) -> tensor<?x4096xbf16> {
    %0 = grove.add %x, %b : (tensor<?x4096xbf16>, tensor<4096xbf16>) -> tensor<?x4096xbf16>
    %1 = grove.gelu %0 : tensor<?x4096xbf16>
    %2 = grove.mul %1, %x : (tensor<?x4096xbf16>, tensor<?x4096xbf16>) -> tensor<?x4096xbf16>
    return %2 : tensor<?x4096xbf16>
  }
  // Row softmax: reductions plus elementwise work.
  func.func @softmax_bf16(%x: tensor<?x4096xbf16>) -> tensor<?x4096xbf16> {
    %0 = grove.softmax %x {axis = 1 : i64} : tensor<?x4096xbf16>
    return %0 : tensor<?x4096xbf16>
  }
  // GEMM bound: one cuBLAS call.
  func.func @gemm_bf16(%a: tensor<?x?xbf16>, %b: tensor<?x?xbf16>) -> tensor<?x?xbf16> {
    %0 = grove.matmul %a, %b : (tensor<?x?xbf16>, tensor<?x?xbf16>) -> tensor<?x?xbf16>
    return %0 : tensor<?x?xbf16>
  }
}

// C = A @ B on f32, every dimension dynamic: the GEMM bench/gemm_bench.c
// times against OpenBLAS's cblas_sgemm on the same shapes; matmul_nt is
// C = A @ Bᵀ (B stored N x K, a dense layer's weights), for its "t" shapes.
module @gemm {
  func.func @matmul(%a: tensor<?x?xf32> {grove.name = "a"},
                    %b: tensor<?x?xf32> {grove.name = "b"})
      -> (tensor<?x?xf32> {grove.name = "c"}) {
    %c = grove.matmul %a, %b
        : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    return %c : tensor<?x?xf32>
  }
  func.func @matmul_nt(%a: tensor<?x?xf32> {grove.name = "a"},
                       %b: tensor<?x?xf32> {grove.name = "b"})
      -> (tensor<?x?xf32> {grove.name = "c"}) {
    %c = grove.matmul %a, %b {transpose_rhs}
        : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    return %c : tensor<?x?xf32>
  }
}

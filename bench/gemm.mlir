// C = A @ B on f32, every dimension dynamic: the GEMM bench/gemm_bench.c
// times against OpenBLAS's cblas_sgemm on the same shapes.
module @gemm {
  func.func @matmul(%a: tensor<?x?xf32> {grove.name = "a"},
                    %b: tensor<?x?xf32> {grove.name = "b"})
      -> (tensor<?x?xf32> {grove.name = "c"}) {
    %c = grove.matmul %a, %b
        : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    return %c : tensor<?x?xf32>
  }
}

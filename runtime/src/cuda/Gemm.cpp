//===- Gemm.cpp - The cuBLAS GEMM service (abi.h) -------------------------===//
//
// Generated code calls grove_rt_cuda_gemm_<type> with row-major rank-3
// memref descriptors (batch, rows, cols); cuBLAS is column-major, so the
// row-major C = op(A) op(B) is computed as the column-major
// C^T = op(B)^T op(A)^T, which needs no copy. An operand whose two inner
// strides fit neither layout is reported, never silently copied.
//
//===----------------------------------------------------------------------===//

#include "CudaContext.h"
#include "DeviceView.h"

#include "Error.h"

#include "grove/abi.h"

#include <algorithm>
#include <climits>

using namespace grove::rt;
using namespace grove::rt::cuda;

namespace {

/// One operand as the runtime receives it.
using Operand = DeviceView<3>;

/// How cuBLAS should read `x` (rows x cols = size[1] x size[2]) so that it
/// sees the stored matrix transposed (`wantTransposed`) or not.
bool layout(const Operand &x, bool wantTransposed, cublasOperation_t &op,
            int64_t &ld) {
  const int64_t rows = x.size[1], cols = x.size[2];
  const int64_t s1 = x.stride[1], s2 = x.stride[2];
  // Memory read column-major with ld = s1 is the transpose of a row-major
  // matrix; with ld = s2 it is a column-major matrix itself.
  bool rowMajor =
      (s2 == 1 || cols == 1) && (rows == 1 || s1 >= std::max<int64_t>(1, cols));
  bool colMajor =
      (s1 == 1 || rows == 1) && (cols == 1 || s2 >= std::max<int64_t>(1, rows));
  if (rowMajor) {
    ld = rows == 1 ? std::max<int64_t>(1, cols) : s1;
    op = wantTransposed ? CUBLAS_OP_N : CUBLAS_OP_T;
    return true;
  }
  if (colMajor) {
    ld = cols == 1 ? std::max<int64_t>(1, rows) : s2;
    op = wantTransposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    return true;
  }
  return false;
}

void gemm(cudaDataType_t type, size_t elemBytes, int32_t transA, int32_t transB,
          float alpha, float beta, const Operand &a, const Operand &b,
          const Operand &c) {
  CudaContext *ctx = currentCall();
  if (!ctx) {
    reportServiceError("grove_rt_cuda_gemm: called outside grove_invoke");
    return;
  }
  if (currentCallFailed())
    return;
  const int64_t batch = c.size[0], m = c.size[1], n = c.size[2];
  const int64_t k = transA ? a.size[1] : a.size[2];
  if (batch == 0 || m == 0 || n == 0)
    return;
  cublasOperation_t opA, opB;
  int64_t lda = 0, ldb = 0;
  // Column-major C^T = op(B)^T op(A)^T: cuBLAS's first operand is op(B)^T,
  // i.e. B transposed unless transB.
  bool cRowMajor = (c.stride[2] == 1 || n == 1) &&
                   (m == 1 || c.stride[1] >= std::max<int64_t>(1, n));
  if (!layout(b, !transB, opB, ldb) || !layout(a, !transA, opA, lda) ||
      !cRowMajor) {
    failCurrentCall(GROVE_ERROR_UNSUPPORTED,
                    "grove_rt_cuda_gemm: operand strides fit no cuBLAS "
                    "layout");
    return;
  }
  const int64_t ldc = m == 1 ? std::max<int64_t>(1, n) : c.stride[1];
  for (int64_t v : {m, n, k, lda, ldb, ldc, batch})
    if (v > INT_MAX) {
      failCurrentCall(GROVE_ERROR_UNSUPPORTED,
                      "grove_rt_cuda_gemm: a dimension exceeds INT_MAX");
      return;
    }
  const char *pa = a.data(elemBytes), *pb = b.data(elemBytes);
  char *pc = c.data(elemBytes);
  // A batch of one may have any batch stride.
  const int64_t sa = batch == 1 ? 0 : a.stride[0];
  const int64_t sb = batch == 1 ? 0 : b.stride[0];
  const int64_t sc = batch == 1 ? 0 : c.stride[0];
  // f32 is computed in f32 (no TF32) to match the host backend; f16 and
  // bf16 accumulate in f32.
  GpuSpan span = ctx->span("gpu.library", "cublas gemm");
  span.arg("m", m);
  span.arg("n", n);
  span.arg("k", k);
  span.arg("batch", batch);
  cublasStatus_t s = cublasGemmStridedBatchedEx(
      ctx->blas(), opB, opA, int(n), int(m), int(k), &alpha, pb, type, int(ldb),
      sb, pa, type, int(lda), sa, &beta, pc, type, int(ldc), sc, int(batch),
      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (s != CUBLAS_STATUS_SUCCESS)
    failCurrentCall(GROVE_ERROR_INTERNAL, std::string("cuBLAS GEMM failed: ") +
                                              cublasGetStatusName(s) + ": " +
                                              cublasGetStatusString(s));
}

} // namespace

#define GROVE_CUDA_GEMM(SUFFIX, MEMREF, CTYPE, DTYPE)                          \
  extern "C" GROVE_API void _mlir_ciface_grove_rt_cuda_gemm_##SUFFIX(          \
      int32_t trans_a, int32_t trans_b, float alpha, float beta,               \
      const MEMREF *a, const MEMREF *b, MEMREF *c) {                           \
    gemm(DTYPE, sizeof(CTYPE), trans_a, trans_b, alpha, beta, viewOf<3>(a),    \
         viewOf<3>(b), viewOf<3>(c));                                          \
  }

GROVE_CUDA_GEMM(f32, grove_memref_f32_3, float, CUDA_R_32F)
GROVE_CUDA_GEMM(f16, grove_memref_u16_3, uint16_t, CUDA_R_16F)
GROVE_CUDA_GEMM(bf16, grove_memref_u16_3, uint16_t, CUDA_R_16BF)

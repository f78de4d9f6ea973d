//===- Blas.cpp - GEMM services for generated code ------------------------===//
//
// grove_rt_matmul_{f32,bf16} / grove_rt_batch_matmul_{f32,bf16} receive
// arbitrary strided memrefs. BLAS wants each matrix row- or column-major with
// a leading dimension, so every operand is normalised to "row-major with ld,
// maybe transposed"; anything else (negative, zero or two non-unit strides)
// is first copied into a compact temporary. Bad arguments cannot be returned
// as a status from here, so they are parked with reportServiceError() and the
// enclosing grove_rt_invoke fails with GROVE_ERROR_INTERNAL.
//
// bf16 products accumulate in f32 (a bf16 sum of K terms would lose about
// log2(K) of its 8 bits) into a compact f32 scratch, which is then rounded
// once into C wherever C's strides put it: C itself is never copied.
//
//===----------------------------------------------------------------------===//

#include "Error.h"
#include "HalfFloat.h"
#include "Tensor.h"
#include "Trace.h"

#if GROVE_HAVE_DNNL
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
// oneDNN 2.6 exports its bf16 GEMM but declares it only for its own tests
// (dnnl.h has sgemm and the integer GEMMs). The definition
// (src/cpu/gemm/gemm.cpp) is row-major like dnnl_sgemm; bfloat16_t is a
// 16-bit word, as abi.h passes bf16.
extern "C" DNNL_API dnnl_status_t dnnl_gemm_bf16bf16f32(
    char transa, char transb, dnnl_dim_t M, dnnl_dim_t N, dnnl_dim_t K,
    float alpha, const uint16_t *A, dnnl_dim_t lda, const uint16_t *B,
    dnnl_dim_t ldb, float beta, float *C, dnnl_dim_t ldc);
#else
#include <cblas.h>
#endif

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

using namespace grove::rt;

namespace {

/// bf16 elements as abi.h passes them: raw 16-bit words (the only 16-bit
/// type these services take).
using bf16 = uint16_t;

/// The services' names, for their error messages (`unexpected` spelled
/// out: a catch block must not allocate).
template <typename T> struct Names;
template <> struct Names<float> {
  static constexpr const char *matmul = "grove_rt_matmul_f32";
  static constexpr const char *batchMatmul = "grove_rt_batch_matmul_f32";
  static constexpr const char *unexpected =
      "grove_rt_matmul_f32: unexpected internal exception";
};
template <> struct Names<bf16> {
  static constexpr const char *matmul = "grove_rt_matmul_bf16";
  static constexpr const char *batchMatmul = "grove_rt_batch_matmul_bf16";
  static constexpr const char *unexpected =
      "grove_rt_matmul_bf16: unexpected internal exception";
};

template <typename T> void report(const std::string &message) {
  reportServiceError((std::string(Names<T>::matmul) + ": " + message).c_str());
}

/// Below this many flops a GEMM runs on one thread. Waking the OpenMP team
/// costs about a microsecond, and a product the team computed is then half
/// in the other core's cache: the bias and activation loop that follows it
/// (small, so on the calling thread) waits on those lines. A lone GEMM of 1
/// to 4 MFLOP is faster on two threads, the training step around it is not
/// (docs/perf.md, "Design measurements").
constexpr double kParallelFlops = 1 << 22;

double gemmFlops(int64_t m, int64_t n, int64_t k) {
  return 2.0 * double(m) * double(n) * double(k);
}

#if GROVE_HAVE_DNNL
/// Runs the oneDNN call in its scope on one thread when it is under
/// kParallelFlops; the caller's own thread count is restored afterwards.
class TeamForProduct {
public:
  explicit TeamForProduct(double flops)
      : saved(omp_get_max_threads()), serial(flops < kParallelFlops) {
    if (serial)
      omp_set_num_threads(1);
  }
  ~TeamForProduct() {
    if (serial)
      omp_set_num_threads(saved);
  }
  TeamForProduct(const TeamForProduct &) = delete;
  TeamForProduct &operator=(const TeamForProduct &) = delete;

private:
  int saved;
  bool serial;
};
#endif

/// Row-major C = alpha op(A) op(B) + beta C on the GEMM library Grove was
/// built with. oneDNN (Debian libdnnl-dev) is preferred: its JIT kernels and
/// OpenMP threading beat OpenBLAS on the small-K and small-N shapes of
/// dense layers here (docs/perf.md, "GEMM throughput"); OpenBLAS is the
/// fallback where oneDNN is absent.
bool sgemmRowMajor(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                   float alpha, const float *a, int64_t lda, const float *b,
                   int64_t ldb, float beta, float *c, int64_t ldc) {
#if GROVE_HAVE_DNNL
  // oneDNN 2.6's sgemm is slow on A·Bᵀ with 16 to about 64 rows of A (a
  // dense layer at batch 16-64), and fast on the same product transposed,
  // Cᵀ = B·Aᵀ (M and N swapped, the few rows now columns), computed into a
  // scratch and transposed into C. 8 rows or fewer are fast either way, and
  // below 4 MFLOP the transpose does not pay (docs/perf.md, "Design
  // measurements").
  // The scratch comes from the runtime's allocator (small: at most 64 rows
  // of C); without one, the product is computed as given.
  Buffer scratch;
  if (transB && !transA && m >= 16 && m <= 64 &&
      2.0 * double(m) * double(n) * double(k) >= double(1 << 22) &&
      (scratch = allocateBuffer(size_t(m) * size_t(n) * sizeof(float)))) {
    float *t = reinterpret_cast<float *>(scratch.get());
    if (dnnl_sgemm('N', 'T', n, m, k, alpha, b, ldb, a, lda, 0.0f, t, m) !=
        dnnl_success)
      return false;
    // C's rows are written contiguously; the scratch is read with stride
    // m <= 64 (it stays in cache).
    for (int64_t i = 0; i < m; ++i) {
      float *row = c + i * ldc;
      if (beta == 0.0f)
        for (int64_t j = 0; j < n; ++j)
          row[j] = t[j * m + i];
      else
        for (int64_t j = 0; j < n; ++j)
          row[j] = t[j * m + i] + beta * row[j];
    }
    return true;
  }
  TeamForProduct team(gemmFlops(m, n, k));
  return dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k, alpha, a,
                    lda, b, ldb, beta, c, ldc) == dnnl_success;
#else
  auto t = [](bool trans) { return trans ? CblasTrans : CblasNoTrans; };
  cblas_sgemm(CblasRowMajor, t(transA), t(transB), int(m), int(n), int(k),
              alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
  return true;
#endif
}

/// An exploded 2-D memref: element (i, j) is base[i * st0 + j * st1].
template <typename T> struct Matrix {
  T *base;
  int64_t rows, cols, st0, st1;
};

/// A BLAS-ready operand: row-major `rows x cols` storage with leading
/// dimension `ld`, to be used transposed if `trans`.
template <typename T> struct Operand {
  const T *data;
  int64_t ld;
  bool trans;
};

bool fitsBlasInt(int64_t v) { return v >= 0 && v <= INT_MAX; }

/// Row-major view of `m` if its strides allow one without copying: unit inner
/// stride (row-major, ld = st0), or unit outer stride (column-major, i.e. the
/// row-major transpose with ld = st1). Strides of size-1 dimensions are free.
template <typename T>
bool viewWithoutCopy(const Matrix<T> &m, bool trans, Operand<T> &out) {
  const int64_t minRowLd = std::max<int64_t>(m.cols, 1);
  const int64_t minColLd = std::max<int64_t>(m.rows, 1);
  // Row-major: unit inner stride, ld = outer stride.
  int64_t inner = m.cols == 1 ? 1 : m.st1;
  int64_t ld = m.rows == 1 ? minRowLd : m.st0;
  if (inner == 1 && ld >= minRowLd && fitsBlasInt(ld)) {
    out = {m.base, ld, trans};
    return true;
  }
  // Column-major: unit outer stride; the same bytes are the row-major
  // transpose with ld = inner stride, so flip the transpose flag.
  inner = m.rows == 1 ? 1 : m.st0;
  ld = m.cols == 1 ? minColLd : m.st1;
  if (inner == 1 && ld >= minColLd && fitsBlasInt(ld)) {
    out = {m.base, ld, !trans};
    return true;
  }
  return false;
}

/// A buffer for `rows x cols` elements of `elemBytes`; null on overflow or
/// allocation failure.
Buffer allocateMatrix(int64_t rows, int64_t cols, size_t elemBytes,
                      bool zero = false) {
  size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(rows),
                             static_cast<size_t>(cols), &bytes) ||
      __builtin_mul_overflow(bytes, elemBytes, &bytes))
    return nullptr;
  return allocateBuffer(bytes, zero);
}

/// Copies `m` to a compact row-major buffer; null on allocation failure.
template <typename T> Buffer compactCopy(const Matrix<T> &m) {
  Buffer buf = allocateMatrix(m.rows, m.cols, sizeof(T));
  if (!buf)
    return nullptr;
  int64_t shape[2] = {m.rows, m.cols}, strides[2] = {m.st0, m.st1};
  stridedCopy(buf.get(), reinterpret_cast<const uint8_t *>(m.base), shape,
              strides, 2, sizeof(T));
  return buf;
}

/// `x` as a BLAS operand: viewed in place, or else copied into `tmp`
/// (reported on failure; `name` says which operand).
template <typename T>
bool operandOf(const Matrix<T> &x, bool trans, Buffer &tmp, Operand<T> &op,
               const char *name) {
  if (viewWithoutCopy(x, trans, op))
    return true;
  if (!(tmp = compactCopy(x))) {
    report<T>(std::string("out of memory copying ") + name);
    return false;
  }
  op = {reinterpret_cast<const T *>(tmp.get()), x.cols, trans};
  return true;
}

/// Writes a compact row-major `src` back into strided `m`.
void scatter(const Matrix<float> &m, const float *src) {
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t j = 0; j < m.cols; ++j)
      m.base[i * m.st0 + j * m.st1] = src[i * m.cols + j];
}

/// C = alpha * op(A) op(B) + beta * C for one matrix triple; shapes checked.
void gemm(bool transA, bool transB, float alpha, float beta,
          const Matrix<float> &a, const Matrix<float> &b,
          const Matrix<float> &c) {
  const int64_t m = c.rows, n = c.cols, k = transA ? a.rows : a.cols;
  if (m == 0 || n == 0)
    return;
  if (k == 0) {
    // op(A) op(B) is all zeros; BLAS would reject ld = 0, so scale here.
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float &x = c.base[i * c.st0 + j * c.st1];
        x = beta == 0.0f ? 0.0f : beta * x;
      }
    return;
  }
  if (!fitsBlasInt(m) || !fitsBlasInt(n) || !fitsBlasInt(k))
    return report<float>("matrix dimension exceeds the BLAS integer range");

  Buffer aTmp, bTmp, cTmp;
  Operand<float> opA, opB, opC;
  if (!operandOf(a, transA, aTmp, opA, "A") ||
      !operandOf(b, transB, bTmp, opB, "B"))
    return;
  float *cData = c.base;
  int64_t ldc = 0;
  bool cColMajor = false;
  if (viewWithoutCopy(c, false, opC)) {
    cData = c.base;
    ldc = opC.ld;
    cColMajor = opC.trans; // stored as C^T row-major
  } else {
    if (!(cTmp = compactCopy(c)))
      return report<float>("out of memory copying C");
    cData = reinterpret_cast<float *>(cTmp.get());
    ldc = n;
  }

  bool ok =
      !cColMajor
          ? sgemmRowMajor(opA.trans, opB.trans, m, n, k, alpha, opA.data,
                          opA.ld, opB.data, opB.ld, beta, cData, ldc)
          // C^T = op(B)^T op(A)^T, computed into C's storage as
          // row-major N x M.
          : sgemmRowMajor(!opB.trans, !opA.trans, n, m, k, alpha, opB.data,
                          opB.ld, opA.data, opA.ld, beta, cData, ldc);
  if (!ok)
    return report<float>("the GEMM library rejected its arguments");
  if (cTmp)
    scatter(c, cData);
}

/// Row i of C = bf16(t + beta * C) for the compact row-major f32 product
/// `t` (alpha applied), written through C's strides; beta = 0 ignores C, as
/// BLAS does (a NaN there does not survive).
void roundRow(const float *t, float beta, const Matrix<bf16> &c, int64_t i) {
  const float *src = t + i * c.cols;
  bf16 *row = c.base + i * c.st0;
  const int64_t st = c.st1;
  // The unit-stride loops are the common case; written apart, they
  // vectorise.
  if (beta == 0.0f && st == 1)
    for (int64_t j = 0; j < c.cols; ++j)
      row[j] = floatToBf16(src[j]);
  else if (st == 1)
    for (int64_t j = 0; j < c.cols; ++j)
      row[j] = floatToBf16(src[j] + beta * bf16ToFloat(row[j]));
  else
    for (int64_t j = 0; j < c.cols; ++j)
      row[j * st] = floatToBf16(
          beta == 0.0f ? src[j] : src[j] + beta * bf16ToFloat(row[j * st]));
}

/// C = bf16(t + beta * C), row by row. A product the team computed
/// (kParallelFlops) is rounded by the team too: on one thread the pass
/// would cost about as much as the product on the other (BERT's
/// 4096x512x128 on two threads ran at 194 GFLOP/s instead of 448 for the
/// product alone).
void roundInto(const float *t, float beta, const Matrix<bf16> &c,
               double flops) {
#if GROVE_HAVE_DNNL
  const bool team = flops >= kParallelFlops && !omp_in_parallel() &&
                    omp_get_max_threads() > 1;
#pragma omp parallel for schedule(static) if (team)
  for (int64_t i = 0; i < c.rows; ++i)
    roundRow(t, beta, c, i);
#else
  (void)flops;
  for (int64_t i = 0; i < c.rows; ++i)
    roundRow(t, beta, c, i);
#endif
}

/// `x` widened to a compact row-major f32 copy in `buf`; false when it
/// cannot be allocated.
bool widen(const Matrix<bf16> &x, Buffer &buf) {
  if (!(buf = allocateMatrix(x.rows, x.cols, sizeof(float))))
    return false;
  float *out = reinterpret_cast<float *>(buf.get());
  for (int64_t i = 0; i < x.rows; ++i)
    for (int64_t j = 0; j < x.cols; ++j)
      out[i * x.cols + j] = bf16ToFloat(x.base[i * x.st0 + j * x.st1]);
  return true;
}

/// t = alpha * op(A) op(B) (m x n, compact) on the f32 GEMM, A and B widened
/// (exactly) first: the path without a bf16 kernel. K > 0.
bool widenedProduct(bool transA, bool transB, float alpha,
                    const Matrix<bf16> &a, const Matrix<bf16> &b, float *t,
                    int64_t m, int64_t n, int64_t k) {
  Buffer aF, bF;
  if (!widen(a, aF) || !widen(b, bF)) {
    report<bf16>("out of memory widening A and B to f32");
    return false;
  }
  if (!sgemmRowMajor(transA, transB, m, n, k, alpha,
                     reinterpret_cast<const float *>(aF.get()), a.cols,
                     reinterpret_cast<const float *>(bF.get()), b.cols, 0.0f, t,
                     n)) {
    report<bf16>("the GEMM library rejected its arguments");
    return false;
  }
  return true;
}

/// t = alpha * op(A) op(B) (m x n, compact) accumulated in f32. K > 0.
bool productF32(bool transA, bool transB, float alpha, const Matrix<bf16> &a,
                const Matrix<bf16> &b, float *t, int64_t m, int64_t n,
                int64_t k) {
#if GROVE_HAVE_DNNL
  Buffer aTmp, bTmp;
  Operand<bf16> opA, opB;
  if (!operandOf(a, transA, aTmp, opA, "A") ||
      !operandOf(b, transB, bTmp, opB, "B"))
    return false;
  dnnl_status_t status;
  {
    TeamForProduct team(gemmFlops(m, n, k));
    status = dnnl_gemm_bf16bf16f32(opA.trans ? 'T' : 'N', opB.trans ? 'T' : 'N',
                                   m, n, k, alpha, opA.data, opA.ld, opB.data,
                                   opB.ld, 0.0f, t, n);
  }
  if (status == dnnl_success)
    return true;
  // oneDNN 2.6 has bf16 kernels for AVX-512 CPUs only; elsewhere it
  // declines, and sgemm on widened copies computes the same sums.
  if (status != dnnl_unimplemented) {
    report<bf16>("the GEMM library rejected its arguments");
    return false;
  }
#endif
  return widenedProduct(transA, transB, alpha, a, b, t, m, n, k);
}

/// C = bf16(alpha * op(A) op(B) + beta * C), the product accumulated in f32
/// and rounded once; shapes checked.
void gemm(bool transA, bool transB, float alpha, float beta,
          const Matrix<bf16> &a, const Matrix<bf16> &b, const Matrix<bf16> &c) {
  const int64_t m = c.rows, n = c.cols, k = transA ? a.rows : a.cols;
  if (m == 0 || n == 0)
    return;
  if (!fitsBlasInt(m) || !fitsBlasInt(n) || !fitsBlasInt(k))
    return report<bf16>("matrix dimension exceeds the BLAS integer range");
  // K = 0: the product is zeros, and BLAS would reject ld = 0.
  Buffer t = allocateMatrix(m, n, sizeof(float), /*zero=*/k == 0);
  if (!t)
    return report<bf16>("out of memory for the f32 product");
  float *product = reinterpret_cast<float *>(t.get());
  if (k > 0 && !productF32(transA, transB, alpha, a, b, product, m, n, k))
    return;
  roundInto(product, beta, c, gemmFlops(m, n, k));
}

/// Checks shapes of one (possibly batched) problem; reports on failure.
template <typename T>
bool checkShapes(bool transA, bool transB, const Matrix<T> &a,
                 const Matrix<T> &b, const Matrix<T> &c) {
  for (const Matrix<T> *x : {&a, &b, &c})
    if (x->rows < 0 || x->cols < 0) {
      report<T>("negative matrix size");
      return false;
    }
  const int64_t m = transA ? a.cols : a.rows, kA = transA ? a.rows : a.cols;
  const int64_t kB = transB ? b.cols : b.rows, n = transB ? b.rows : b.cols;
  if (kA != kB || c.rows != m || c.cols != n) {
    report<T>("shape mismatch: op(A) is " + std::to_string(m) + "x" +
              std::to_string(kA) + ", op(B) is " + std::to_string(kB) + "x" +
              std::to_string(n) + ", C is " + std::to_string(c.rows) + "x" +
              std::to_string(c.cols));
    return false;
  }
  const bool empty = m == 0 || n == 0;
  if (!empty && !c.base) {
    report<T>("C is NULL");
    return false;
  }
  if (!empty && kA > 0 && (!a.base || !b.base)) {
    report<T>("A or B is NULL");
    return false;
  }
  return true;
}

/// The matrix a 2-D memref (or one batch element of a 3-D one) views.
template <typename T>
Matrix<T> matrixOf(T *aligned, int64_t offset, const int64_t *sizes,
                   const int64_t *strides) {
  // A NULL aligned pointer stays NULL (offset ignored) so checkShapes sees
  // it.
  return {aligned ? aligned + offset : nullptr, sizes[0], sizes[1], strides[0],
          strides[1]};
}

template <typename T>
void matmul(int32_t transA, int32_t transB, float alpha, float beta,
            const Matrix<T> &a, const Matrix<T> &b, const Matrix<T> &c) {
  // Generated code cannot handle C++ exceptions (e.g. bad_alloc from a
  // message string); turn them into a pending service error.
  try {
    if (checkShapes(transA, transB, a, b, c))
      gemm(transA, transB, alpha, beta, a, b, c);
  } catch (...) {
    reportServiceError(Names<T>::unexpected);
  }
}

/// Whether a batch of products each as small as C = op(A) (given by batch
/// element 0) is better spread over the OpenMP team, one product a thread:
/// each would run on one thread anyway (kParallelFlops), there are several,
/// their sum is worth waking the team for, and the products write disjoint
/// memory (C's batch stride clears a whole matrix; a stride of 0 or
/// overlapping ones accumulate in order).
template <typename T>
bool spreadOverTeam(int32_t transA, int64_t batch, const Matrix<T> &a,
                    const Matrix<T> &c, int64_t cBatchStride) {
  const double flops = gemmFlops(c.rows, c.cols, transA ? a.rows : a.cols);
  const int64_t extent =
      (c.rows - 1) * std::abs(c.st0) + (c.cols - 1) * std::abs(c.st1) + 1;
  const bool worth = batch >= 2 && flops < kParallelFlops &&
                     flops * double(batch) >= kParallelFlops &&
                     std::abs(cBatchStride) >= extent;
#if GROVE_HAVE_DNNL
  return worth && omp_get_max_threads() > 1 && !omp_in_parallel();
#else
  (void)worth;
  return false;
#endif
}

/// The batched service for either element type: a product per batch
/// element, on the calling thread or spread over the team.
template <typename T, typename Memref3>
void batchMatmul(int32_t trans_a, int32_t trans_b, float alpha, float beta,
                 const Memref3 *a, const Memref3 *b, Memref3 *c) {
  const int64_t batch = a->sizes[0];
  trace::Span span("service", Names<T>::batchMatmul);
  span.arg("batch", batch);
  span.arg("m", c->sizes[1]);
  span.arg("n", c->sizes[2]);
  span.arg("k", a->sizes[trans_a ? 1 : 2]);
  if (batch != b->sizes[0] || batch != c->sizes[0] || batch < 0) {
    char message[200];
    std::snprintf(message, sizeof(message),
                  "%s: batch sizes differ or are negative (A %lld, B %lld, "
                  "C %lld)",
                  Names<T>::batchMatmul, static_cast<long long>(batch),
                  static_cast<long long>(b->sizes[0]),
                  static_cast<long long>(c->sizes[0]));
    reportServiceError(message);
    return;
  }
  auto element = [&](const Memref3 *m, int64_t i) {
    return matrixOf<T>(m->aligned, m->offset + i * m->strides[0], m->sizes + 1,
                       m->strides + 1);
  };
  if (!spreadOverTeam(trans_a, batch, element(a, 0), element(c, 0),
                      c->strides[0])) {
    for (int64_t i = 0; i < batch; ++i)
      matmul(trans_a, trans_b, alpha, beta, element(a, i), element(b, i),
             element(c, i));
    return;
  }
#if GROVE_HAVE_DNNL
  // Every shape is checked here, so that a bad one is reported on the
  // caller's thread; the team only multiplies.
  for (int64_t i = 0; i < batch; ++i)
    if (!checkShapes(trans_a, trans_b, element(a, i), element(b, i),
                     element(c, i)))
      return;
  // A team thread's error is its own (thread-local): the first one goes to
  // the calling thread with its status, which keeps its own errors where
  // they are (one parked before this call included). Nothing here may
  // throw out of the region.
  char failure[256] = "";
  grove_status failureStatus = GROVE_ERROR_INTERNAL;
  bool failed = false;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < batch; ++i) {
    const char *what = nullptr;
    grove_status status = GROVE_ERROR_INTERNAL;
    std::string message;
    try {
      gemm(trans_a, trans_b, alpha, beta, element(a, i), element(b, i),
           element(c, i));
      if (omp_get_thread_num() != 0 && takeServiceError(message, status))
        what = message.c_str();
    } catch (...) {
      what = Names<T>::unexpected;
      status = GROVE_ERROR_INTERNAL;
    }
    if (what) {
#pragma omp critical(grove_batch_matmul_error)
      if (!failed) {
        failed = true;
        failureStatus = status;
        std::snprintf(failure, sizeof(failure), "%s", what);
      }
    }
  }
  if (failed)
    reportServiceError(failure, failureStatus);
#endif
}

/// One product of 2-D memrefs (the matmul entry points of each type).
template <typename Memref>
void matmul2D(int32_t transA, int32_t transB, float alpha, float beta,
              const Memref *a, const Memref *b, Memref *c) {
  using T = std::remove_pointer_t<decltype(c->aligned)>;
  trace::Span span("service", Names<T>::matmul);
  span.arg("m", c->sizes[0]);
  span.arg("n", c->sizes[1]);
  span.arg("k", a->sizes[transA ? 0 : 1]);
  matmul(transA, transB, alpha, beta,
         matrixOf(a->aligned, a->offset, a->sizes, a->strides),
         matrixOf(b->aligned, b->offset, b->sizes, b->strides),
         matrixOf(c->aligned, c->offset, c->sizes, c->strides));
}

} // namespace

extern "C" {

GROVE_API void _mlir_ciface_grove_rt_matmul_f32(int32_t trans_a,
                                                int32_t trans_b, float alpha,
                                                float beta,
                                                const grove_memref_f32_2 *a,
                                                const grove_memref_f32_2 *b,
                                                grove_memref_f32_2 *c) {
  matmul2D(trans_a, trans_b, alpha, beta, a, b, c);
}

GROVE_API void _mlir_ciface_grove_rt_batch_matmul_f32(
    int32_t trans_a, int32_t trans_b, float alpha, float beta,
    const grove_memref_f32_3 *a, const grove_memref_f32_3 *b,
    grove_memref_f32_3 *c) {
  batchMatmul<float>(trans_a, trans_b, alpha, beta, a, b, c);
}

GROVE_API void _mlir_ciface_grove_rt_matmul_bf16(int32_t trans_a,
                                                 int32_t trans_b, float alpha,
                                                 float beta,
                                                 const grove_memref_u16_2 *a,
                                                 const grove_memref_u16_2 *b,
                                                 grove_memref_u16_2 *c) {
  matmul2D(trans_a, trans_b, alpha, beta, a, b, c);
}

GROVE_API void _mlir_ciface_grove_rt_batch_matmul_bf16(
    int32_t trans_a, int32_t trans_b, float alpha, float beta,
    const grove_memref_u16_3 *a, const grove_memref_u16_3 *b,
    grove_memref_u16_3 *c) {
  batchMatmul<bf16>(trans_a, trans_b, alpha, beta, a, b, c);
}

} // extern "C"

//===- BlasTest.cpp - The host GEMM service against a naive reference ----===//

#include "TestUtil.h"

#include <cmath>
#include <limits>
#include <random>

using namespace grove::test;

namespace {

enum class Layout {
  RowMajor,
  RowMajorPadded, // ld > cols
  ColMajor,
  ColMajorPadded, // ld > rows
  BothStrided,    // no unit stride: needs a copy
  NegativeInner,  // reversed columns
  Broadcast,      // outer stride 0 (read-only operands only)
};

const char *name(Layout l) {
  switch (l) {
  case Layout::RowMajor:
    return "row";
  case Layout::RowMajorPadded:
    return "row+pad";
  case Layout::ColMajor:
    return "col";
  case Layout::ColMajorPadded:
    return "col+pad";
  case Layout::BothStrided:
    return "strided";
  case Layout::NegativeInner:
    return "negative";
  case Layout::Broadcast:
    return "broadcast";
  }
  return "?";
}

constexpr float kGuard = 777.0f;

/// A strided matrix inside a guard-filled buffer, as an exploded memref.
struct StridedMatrix {
  std::vector<float> buffer;
  int64_t offset = 0, rows = 0, cols = 0, st0 = 0, st1 = 0;

  StridedMatrix(int64_t r, int64_t c, Layout layout) : rows(r), cols(c) {
    switch (layout) {
    case Layout::RowMajor:
      st0 = c, st1 = 1;
      break;
    case Layout::RowMajorPadded:
      st0 = c + 3, st1 = 1;
      break;
    case Layout::ColMajor:
      st0 = 1, st1 = r;
      break;
    case Layout::ColMajorPadded:
      st0 = 1, st1 = r + 2;
      break;
    case Layout::BothStrided:
      st0 = 2 * c + 1, st1 = 2;
      break;
    case Layout::NegativeInner:
      st0 = c, st1 = -1;
      break;
    case Layout::Broadcast:
      st0 = 0, st1 = 1;
      break;
    }
    // Span of touched indices, so the buffer covers them plus a margin.
    int64_t lo = 0, hi = 0;
    for (int64_t d : {st0 * (r - 1), st1 * (c - 1)}) {
      if (r == 0 || c == 0)
        break;
      (d < 0 ? lo : hi) += d;
    }
    offset = 4 - lo;
    buffer.assign(static_cast<size_t>(hi - lo + 9), kGuard);
  }
  float &at(int64_t i, int64_t j) { return buffer[offset + i * st0 + j * st1]; }
  /// Which buffer slots belong to the view.
  std::vector<bool> viewMask() const {
    std::vector<bool> mask(buffer.size(), false);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        mask[offset + i * st0 + j * st1] = true;
    return mask;
  }
};

void fill(StridedMatrix &m, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t j = 0; j < m.cols; ++j)
      m.at(i, j) = dist(rng);
}

void callMatmul(bool ta, bool tb, float alpha, float beta, StridedMatrix &a,
                StridedMatrix &b, StridedMatrix &c) {
  float *ap = a.buffer.data(), *bp = b.buffer.data(), *cp = c.buffer.data();
  grove_memref_f32_2 am = memref2(ap, a.offset, a.rows, a.cols, a.st0, a.st1),
                     bm = memref2(bp, b.offset, b.rows, b.cols, b.st0, b.st1),
                     cm = memref2(cp, c.offset, c.rows, c.cols, c.st0, c.st1);
  _mlir_ciface_grove_rt_matmul_f32(ta, tb, alpha, beta, &am, &bm, &cm);
}

/// Runs one GEMM and compares with a double-precision naive loop; also checks
/// that C's buffer outside the view is untouched.
void checkGemm(int64_t m, int64_t n, int64_t k, bool ta, bool tb, Layout la,
               Layout lb, Layout lc, float alpha, float beta,
               std::mt19937 &rng) {
  SCOPED_TRACE(::testing::Message()
               << "m=" << m << " n=" << n << " k=" << k << " ta=" << ta
               << " tb=" << tb << " A=" << name(la) << " B=" << name(lb)
               << " C=" << name(lc) << " alpha=" << alpha << " beta=" << beta);
  StridedMatrix a(ta ? k : m, ta ? m : k, la);
  StridedMatrix b(tb ? n : k, tb ? k : n, lb);
  StridedMatrix c(m, n, lc);
  fill(a, rng);
  fill(b, rng);
  fill(c, rng);
  std::vector<double> expected(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum += double(ta ? a.at(p, i) : a.at(i, p)) *
               double(tb ? b.at(j, p) : b.at(p, j));
      expected[i * n + j] = alpha * sum + beta * double(c.at(i, j));
    }
  callMatmul(ta, tb, alpha, beta, a, b, c);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      ASSERT_NEAR(c.at(i, j), expected[i * n + j], 1e-4 * (1 + k))
          << "at (" << i << ", " << j << ")";
  const std::vector<bool> mask = c.viewMask();
  for (size_t idx = 0; idx < c.buffer.size(); ++idx)
    if (!mask[idx]) {
      ASSERT_EQ(c.buffer[idx], kGuard) << "C buffer clobbered at " << idx;
    }
}

TEST(Blas, MatchesNaiveLoopOnAllLayouts) {
  std::mt19937 rng(7);
  const Layout operandLayouts[] = {Layout::RowMajor,    Layout::RowMajorPadded,
                                   Layout::ColMajor,    Layout::ColMajorPadded,
                                   Layout::BothStrided, Layout::NegativeInner,
                                   Layout::Broadcast};
  const Layout resultLayouts[] = {Layout::RowMajor,    Layout::RowMajorPadded,
                                  Layout::ColMajor,    Layout::ColMajorPadded,
                                  Layout::BothStrided, Layout::NegativeInner};
  const int64_t sizes[][3] = {
      {3, 5, 7}, {1, 4, 6}, {5, 1, 3}, {4, 6, 1}, {1, 1, 1}};
  for (const auto &mnk : sizes)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (Layout la : operandLayouts)
          for (Layout lb : operandLayouts)
            for (Layout lc : resultLayouts) {
              checkGemm(mnk[0], mnk[1], mnk[2], ta, tb, la, lb, lc, 1.0f, 0.0f,
                        rng);
              if (::testing::Test::HasFatalFailure())
                return;
            }
}

TEST(Blas, AlphaBetaAndLargerSizes) {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 40; ++iter) {
    int64_t m = 1 + rng() % 70, n = 1 + rng() % 70, k = 1 + rng() % 70;
    bool ta = rng() & 1, tb = rng() & 1;
    Layout la = Layout(rng() % 7), lb = Layout(rng() % 7),
           lc = Layout(rng() % 6);
    float alpha = (rng() % 5) * 0.5f - 1.0f, beta = (rng() % 5) * 0.5f - 1.0f;
    checkGemm(m, n, k, ta, tb, la, lb, lc, alpha, beta, rng);
    if (::testing::Test::HasFatalFailure())
      return;
  }
}

// Dense-layer shapes, A·Bᵀ with 16 to 64 rows of A from 4 MFLOP on, which
// the oneDNN build computes transposed into a scratch and transposes into C
// (Blas.cpp, sgemmRowMajor); next to them the shapes just outside (15 and
// 65 rows, under 4 MFLOP) that it computes directly. C padded or
// column-major (the transposed problem), alpha and beta not 1 and 0.
TEST(Blas, TransposedRhsDenseLayerShapes) {
  std::mt19937 rng(5);
  const int64_t sizes[][3] = {{16, 300, 512}, {40, 257, 300}, {64, 200, 400},
                              {15, 300, 512}, {65, 200, 400}, {16, 128, 64}};
  for (const auto &mnk : sizes)
    for (Layout lc :
         {Layout::RowMajor, Layout::RowMajorPadded, Layout::ColMajor})
      for (float beta : {0.0f, 0.5f}) {
        checkGemm(mnk[0], mnk[1], mnk[2], false, true, Layout::RowMajor,
                  Layout::RowMajor, lc, 1.5f, beta, rng);
        if (::testing::Test::HasFatalFailure())
          return;
      }
  // A column-major C of a product with 16-64 columns flips to the
  // transposed problem with that many rows.
  checkGemm(300, 32, 512, false, true, Layout::RowMajor, Layout::RowMajor,
            Layout::ColMajor, 1.0f, 0.0f, rng);
}

TEST(Blas, ZeroSizedDimensions) {
  std::mt19937 rng(3);
  for (Layout lc : {Layout::RowMajor, Layout::ColMajor, Layout::BothStrided}) {
    checkGemm(0, 5, 3, false, false, Layout::RowMajor, Layout::RowMajor, lc,
              1.0f, 1.0f, rng);
    checkGemm(4, 0, 3, true, false, Layout::RowMajor, Layout::RowMajor, lc,
              1.0f, 1.0f, rng);
    checkGemm(4, 5, 0, false, true, Layout::RowMajor, Layout::RowMajor, lc,
              1.0f, 2.0f, rng);
    checkGemm(0, 0, 0, false, false, Layout::RowMajor, Layout::RowMajor, lc,
              1.0f, 0.0f, rng);
  }
}

TEST(Blas, ZeroKWithZeroBetaClearsNaN) {
  StridedMatrix a(3, 0, Layout::RowMajor), b(0, 2, Layout::RowMajor),
      c(3, 2, Layout::RowMajor);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j)
      c.at(i, j) = std::numeric_limits<float>::quiet_NaN();
  callMatmul(false, false, 1.0f, 0.0f, a, b, c);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j)
      EXPECT_EQ(c.at(i, j), 0.0f);
}

TEST(Blas, BadArgumentsDoNotTouchMemory) {
  StridedMatrix a(2, 3, Layout::RowMajor), b(2, 3, Layout::RowMajor),
      c(2, 2, Layout::RowMajor);
  callMatmul(false, false, 1.0f, 0.0f, a, b, c); // K mismatch: 3 vs 2
  for (float x : c.buffer)
    EXPECT_EQ(x, kGuard);
  StridedMatrix neg(2, 2, Layout::RowMajor);
  neg.rows = -2;
  callMatmul(false, false, 1.0f, 0.0f, neg, neg, c);
  for (float x : c.buffer)
    EXPECT_EQ(x, kGuard);
  // NULL C with a non-empty shape.
  float *ap = a.buffer.data();
  grove_memref_f32_2 am = memref2(ap, 0, 2, 3, 3, 1),
                     nullC = memref2(nullptr, 0, 2, 2, 2, 1);
  _mlir_ciface_grove_rt_matmul_f32(0, 1, 1.0f, 0.0f, &am, &am, &nullC);
  EXPECT_TRUE(clearParkedServiceError());
}

TEST(Blas, BatchedMatchesPerBatchGemm) {
  std::mt19937 rng(5);
  const int64_t batch = 3, m = 4, n = 5, k = 6;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      const int64_t ar = ta ? k : m, ac = ta ? m : k;
      const int64_t br = tb ? n : k, bc = tb ? k : n;
      std::vector<float> a(batch * ar * ac), b(batch * br * bc),
          c(batch * m * n, 0.0f);
      std::uniform_real_distribution<float> dist(-1, 1);
      for (float &x : a)
        x = dist(rng);
      for (float &x : b)
        x = dist(rng);
      grove_memref_f32_3 am = memref3(a.data(), 0, batch, ar, ac, ar * ac, ac,
                                      1),
                         bm = memref3(b.data(), 0, batch, br, bc, br * bc, bc,
                                      1),
                         cm = memref3(c.data(), 0, batch, m, n, m * n, n, 1);
      _mlir_ciface_grove_rt_batch_matmul_f32(ta, tb, 1.0f, 0.0f, &am, &bm, &cm);
      for (int64_t q = 0; q < batch; ++q)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double sum = 0;
            for (int64_t p = 0; p < k; ++p)
              sum += double(ta ? a[q * ar * ac + p * ac + i]
                               : a[q * ar * ac + i * ac + p]) *
                     double(tb ? b[q * br * bc + j * bc + p]
                               : b[q * br * bc + p * bc + j]);
            ASSERT_NEAR(c[q * m * n + i * n + j], sum, 1e-4)
                << "batch " << q << " ta=" << ta << " tb=" << tb;
          }
    }
}

// grovec shares one rhs across the batch with a batch stride of 0.
TEST(Blas, BatchedSharedRhsWithZeroBatchStride) {
  const int64_t batch = 3, m = 2, n = 2, k = 2;
  std::vector<float> a = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  std::vector<float> b = {1, 0, 0, 2}; // diag(1, 2)
  std::vector<float> c(batch * m * n, kGuard);
  grove_memref_f32_3 am = memref3(a.data(), 0, batch, m, k, m * k, k, 1),
                     bm = memref3(b.data(), 0, batch, k, n, 0, n, 1),
                     cm = memref3(c.data(), 0, batch, m, n, m * n, n, 1);
  _mlir_ciface_grove_rt_batch_matmul_f32(0, 0, 1.0f, 0.0f, &am, &bm, &cm);
  EXPECT_EQ(c, (std::vector<float>{1, 4, 3, 8, 5, 12, 7, 16, 9, 20, 11, 24}));
}

TEST(Blas, BatchedRejectsMismatchedBatchWithoutWriting) {
  std::vector<float> a(8, 1.0f), b(8, 1.0f), c(8, kGuard);
  grove_memref_f32_3 am = memref3(a.data(), 0, 2, 2, 2, 4, 2, 1),
                     bm = memref3(b.data(), 0, 1, 2, 2, 4, 2, 1),
                     cm = memref3(c.data(), 0, 2, 2, 2, 4, 2, 1);
  _mlir_ciface_grove_rt_batch_matmul_f32(0, 0, 1.0f, 0.0f, &am, &bm, &cm);
  for (float x : c)
    EXPECT_EQ(x, kGuard);
}

// A batch of products each under the one-thread size (4 MFLOP; these are
// 0.19) but together over it is spread over the OpenMP team, a product a thread
// (scripts/test.sh runs the ParallelFor* suites again on two threads). A is
// strided in both dimensions, so each team thread also makes its own compact
// copy, and C is column-major with beta != 0.
TEST(ParallelForBatchedGemm, SmallProductsSpreadOverTheTeamMatch) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1, 1);
  const int64_t batch = 24, m = 48, n = 40, k = 50;
  const int64_t aRow = 2 * (2 * k + 1), aBatch = m * aRow; // st0, batch
  std::vector<float> a(batch * aBatch, kGuard), b(batch * k * n),
      c(batch * m * n);
  for (int64_t q = 0; q < batch; ++q)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p)
        a[q * aBatch + i * aRow + 2 * p] = dist(rng);
  for (float &x : b)
    x = dist(rng);
  for (float &x : c)
    x = dist(rng);
  const std::vector<float> c0 = c;
  grove_memref_f32_3 am = memref3(a.data(), 0, batch, m, k, aBatch, aRow, 2),
                     bm = memref3(b.data(), 0, batch, k, n, k * n, n, 1),
                     cm = memref3(c.data(), 0, batch, m, n, m * n, 1, m);
  _mlir_ciface_grove_rt_batch_matmul_f32(0, 0, 0.5f, 2.0f, &am, &bm, &cm);
  for (int64_t q = 0; q < batch; ++q)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += double(a[q * aBatch + i * aRow + 2 * p]) *
                 double(b[q * k * n + p * n + j]);
        const int64_t at = q * m * n + j * m + i;
        ASSERT_NEAR(c[at], 0.5 * sum + 2.0 * c0[at], 1e-4)
            << "batch " << q << " (" << i << ", " << j << ")";
      }
}

// Products that all write one C (batch stride 0) accumulate in order with
// beta = 1, as before the team could take a batch: they are not spread.
TEST(ParallelForBatchedGemm, SharedResultIsNotSpread) {
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> dist(-1, 1);
  const int64_t batch = 24, m = 48, n = 40, k = 50;
  std::vector<float> a(batch * m * k), b(batch * k * n), c(m * n);
  for (std::vector<float> *v : {&a, &b, &c})
    for (float &x : *v)
      x = dist(rng);
  std::vector<double> expected(c.begin(), c.end());
  for (int64_t q = 0; q < batch; ++q)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t p = 0; p < k; ++p)
          expected[i * n + j] += double(a[q * m * k + i * k + p]) *
                                 double(b[q * k * n + p * n + j]);
  grove_memref_f32_3 am = memref3(a.data(), 0, batch, m, k, m * k, k, 1),
                     bm = memref3(b.data(), 0, batch, k, n, k * n, n, 1),
                     cm = memref3(c.data(), 0, batch, m, n, 0, n, 1);
  _mlir_ciface_grove_rt_batch_matmul_f32(0, 0, 1.0f, 1.0f, &am, &bm, &cm);
  for (int64_t i = 0; i < m * n; ++i)
    ASSERT_NEAR(c[i], expected[i], 1e-3) << "element " << i;
}

// The same batch with mismatched inner sizes is rejected before the team
// starts, and C is left as it was.
TEST(ParallelForBatchedGemm, MismatchIsRejectedWithoutWriting) {
  const int64_t batch = 24, m = 48, n = 40, k = 50;
  std::vector<float> a(batch * m * k, 1.0f), b(batch * (k + 1) * n, 1.0f),
      c(batch * m * n, kGuard);
  grove_memref_f32_3 am = memref3(a.data(), 0, batch, m, k, m * k, k, 1),
                     bm = memref3(b.data(), 0, batch, k + 1, n, (k + 1) * n, n,
                                  1),
                     cm = memref3(c.data(), 0, batch, m, n, m * n, n, 1);
  _mlir_ciface_grove_rt_batch_matmul_f32(0, 0, 1.0f, 0.0f, &am, &bm, &cm);
  for (float x : c)
    EXPECT_EQ(x, kGuard);
  EXPECT_TRUE(clearParkedServiceError());
}

} // namespace

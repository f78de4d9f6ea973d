//===- BlasBf16Test.cpp - The host bf16 GEMM services ---------------------===//
//
// grove_rt_matmul_bf16 / grove_rt_batch_matmul_bf16 against a double
// reference computed from the same bf16 inputs. The products accumulate in
// f32 and are rounded to bf16 once, so a result may be off by half a bf16
// ulp of itself (2^-8 relative, at most) plus the f32 sum's error (K * 2^-24
// relative): the tolerance is (2^-8 + K * 2^-23) times the sum of the
// magnitudes of its terms, |alpha| sum_p |a_ip b_pj| + |beta c_ij|. Where
// the sums are exact in f32 (small integers), the result must be the bf16
// nearest to the exact value, ties to even, bit for bit; a bf16 running sum
// would fail those.
//
//===----------------------------------------------------------------------===//

#include "Error.h"

#include "grove/abi.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace grove::rt;

namespace {

// The test's own conversions (not the runtime's): a bf16 is the top half of
// an f32.
float widen(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

/// The bf16 with the top half of `f`'s bits: exact where `f` is a bf16.
uint16_t top(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return uint16_t(bits >> 16);
}

/// `x` rounded to 8 significant bits, ties to even (the default rounding
/// mode of nearbyint); normal range only.
double nearestBf16(double x) {
  if (x == 0)
    return 0;
  const double ulp = std::ldexp(1.0, std::ilogb(x) - 7);
  return std::nearbyint(x / ulp) * ulp;
}

enum class Layout { RowMajor, RowPadded, ColMajor, BothStrided, Negative };
constexpr Layout kLayouts[] = {Layout::RowMajor, Layout::RowPadded,
                               Layout::ColMajor, Layout::BothStrided,
                               Layout::Negative};
constexpr uint16_t kGuard = 0x4448; // 800.0

/// A strided bf16 matrix inside a guard-filled buffer.
struct Bf16Matrix {
  std::vector<uint16_t> buffer;
  int64_t offset = 0, rows = 0, cols = 0, st0 = 0, st1 = 0;

  Bf16Matrix(int64_t r, int64_t c, Layout layout) : rows(r), cols(c) {
    switch (layout) {
    case Layout::RowMajor:
      st0 = c, st1 = 1;
      break;
    case Layout::RowPadded:
      st0 = c + 3, st1 = 1;
      break;
    case Layout::ColMajor:
      st0 = 1, st1 = r;
      break;
    case Layout::BothStrided: // no unit stride: the runtime copies it
      st0 = 2 * c + 1, st1 = 2;
      break;
    case Layout::Negative: // reversed columns
      st0 = c, st1 = -1;
      break;
    }
    int64_t lo = 0, hi = 0;
    if (r > 0 && c > 0)
      for (int64_t d : {st0 * (r - 1), st1 * (c - 1)})
        (d < 0 ? lo : hi) += d;
    offset = 4 - lo;
    buffer.assign(size_t(hi - lo + 9), kGuard);
  }
  uint16_t &at(int64_t i, int64_t j) {
    return buffer[size_t(offset + i * st0 + j * st1)];
  }
  float value(int64_t i, int64_t j) { return widen(at(i, j)); }
  grove_memref_u16_2 memref() {
    return {buffer.data(), buffer.data(), offset, {rows, cols}, {st0, st1}};
  }
  /// Whether every slot outside the view still holds the guard.
  bool guardsIntact() const {
    std::vector<bool> in(buffer.size(), false);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        in[size_t(offset + i * st0 + j * st1)] = true;
    for (size_t x = 0; x < buffer.size(); ++x)
      if (!in[x] && buffer[x] != kGuard)
        return false;
    return true;
  }
};

void fillRandom(Bf16Matrix &m, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t j = 0; j < m.cols; ++j)
      m.at(i, j) = top(dist(rng));
}

struct Problem {
  int64_t m, n, k;
  bool ta = false, tb = false;
  float alpha = 1.0f, beta = 0.0f;
};

/// Runs one bf16 GEMM on random inputs and checks every element of C
/// against the double reference, and C's buffer outside the view.
void checkGemm(const Problem &p, Layout la, Layout lb, Layout lc,
               std::mt19937 &rng) {
  SCOPED_TRACE(::testing::Message()
               << "m=" << p.m << " n=" << p.n << " k=" << p.k << " ta=" << p.ta
               << " tb=" << p.tb << " layouts " << int(la) << int(lb) << int(lc)
               << " alpha=" << p.alpha << " beta=" << p.beta);
  Bf16Matrix a(p.ta ? p.k : p.m, p.ta ? p.m : p.k, la);
  Bf16Matrix b(p.tb ? p.n : p.k, p.tb ? p.k : p.n, lb);
  Bf16Matrix c(p.m, p.n, lc);
  fillRandom(a, rng);
  fillRandom(b, rng);
  fillRandom(c, rng);
  std::vector<double> want(size_t(p.m * p.n)), bound(want.size());
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      double sum = 0, magnitude = 0;
      for (int64_t q = 0; q < p.k; ++q) {
        double t = double(p.ta ? a.value(q, i) : a.value(i, q)) *
                   double(p.tb ? b.value(j, q) : b.value(q, j));
        sum += t;
        magnitude += std::fabs(t);
      }
      const double cij = p.beta == 0 ? 0 : double(c.value(i, j));
      want[i * p.n + j] = p.alpha * sum + p.beta * cij;
      bound[i * p.n + j] =
          (std::ldexp(1.0, -8) + double(p.k) * std::ldexp(1.0, -23)) *
              (std::fabs(p.alpha) * magnitude + std::fabs(p.beta * cij)) +
          1e-30;
    }
  grove_memref_u16_2 am = a.memref(), bm = b.memref(), cm = c.memref();
  _mlir_ciface_grove_rt_matmul_bf16(p.ta, p.tb, p.alpha, p.beta, &am, &bm, &cm);
  std::string message;
  grove_status status;
  ASSERT_FALSE(takeServiceError(message, status)) << message;
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j)
      ASSERT_NEAR(c.value(i, j), want[i * p.n + j], bound[i * p.n + j])
          << "at (" << i << ", " << j << ")";
  ASSERT_TRUE(c.guardsIntact());
}

TEST(BlasBf16, MatchesReferenceOnAllLayouts) {
  clearServiceError();
  std::mt19937 rng(7);
  const int64_t sizes[][3] = {{3, 5, 7}, {1, 4, 6}, {5, 1, 3}, {4, 6, 1}};
  for (const auto &mnk : sizes)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (Layout la : kLayouts)
          for (Layout lb : kLayouts)
            for (Layout lc : kLayouts) {
              checkGemm({mnk[0], mnk[1], mnk[2], bool(ta), bool(tb)}, la, lb,
                        lc, rng);
              if (::testing::Test::HasFatalFailure())
                return;
            }
}

// Sizes oneDNN's kernels block and (from 4 MFLOP) thread, alpha and beta
// not 1 and 0, C row-major, padded or column-major.
TEST(BlasBf16, AlphaBetaAndLargerSizes) {
  clearServiceError();
  std::mt19937 rng(11);
  const int64_t sizes[][3] = {{64, 200, 300}, {130, 129, 160}, {17, 33, 513}};
  for (const auto &mnk : sizes)
    for (int t = 0; t < 4; ++t)
      for (Layout lc :
           {Layout::RowMajor, Layout::RowPadded, Layout::ColMajor}) {
        Problem p{mnk[0], mnk[1], mnk[2], bool(t & 1), bool(t & 2)};
        p.alpha = t == 0 ? 1.0f : -0.5f;
        p.beta = t < 2 ? 0.0f : 1.5f;
        checkGemm(p, t == 3 ? Layout::ColMajor : Layout::RowMajor,
                  Layout::RowMajor, lc, rng);
        if (::testing::Test::HasFatalFailure())
          return;
      }
}

// Small integers: every partial sum is exact in f32 but not in bf16 (sums
// past 256 need more than 8 bits), so the result is the exact value rounded
// once to nearest even.
TEST(BlasBf16, SumsInF32AndRoundsOnceToNearestEven) {
  clearServiceError();
  std::mt19937 rng(3);
  const int64_t m = 9, n = 11, k = 200;
  Bf16Matrix a(m, k, Layout::RowMajor), b(k, n, Layout::RowMajor),
      c(m, n, Layout::RowMajor);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t q = 0; q < k; ++q)
      a.at(i, q) = top(float(int(rng() % 9) - 2)); // -2..6: sums grow
  for (int64_t q = 0; q < k; ++q)
    for (int64_t j = 0; j < n; ++j)
      b.at(q, j) = top(float(int(rng() % 5)));
  grove_memref_u16_2 am = a.memref(), bm = b.memref(), cm = c.memref();
  _mlir_ciface_grove_rt_matmul_bf16(0, 0, 1.0f, 0.0f, &am, &bm, &cm);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double exact = 0;
      for (int64_t q = 0; q < k; ++q)
        exact += double(a.value(i, q)) * double(b.value(q, j));
      ASSERT_EQ(double(c.value(i, j)), nearestBf16(exact))
          << "at (" << i << ", " << j << "), exact " << exact;
    }
  // Rows of K ones: a bf16 running sum would stop at 256. Between 1024 and
  // 2048 the bf16s are 8 apart: 1027 is nearest 1024; 1028 and 1036 are
  // ties, to the even 1024 (128 * 8) and 1040 (130 * 8).
  const std::pair<int64_t, float> cases[] = {
      {1027, 1024.0f}, {1028, 1024.0f}, {1036, 1040.0f}};
  for (auto [kOnes, want] : cases) {
    Bf16Matrix ones(1, kOnes, Layout::RowMajor),
        col(kOnes, 1, Layout::ColMajor), out(1, 1, Layout::RowMajor);
    for (int64_t q = 0; q < kOnes; ++q)
      ones.at(0, q) = col.at(q, 0) = top(1.0f);
    grove_memref_u16_2 om = ones.memref(), lm = col.memref(), rm = out.memref();
    _mlir_ciface_grove_rt_matmul_bf16(0, 0, 1.0f, 0.0f, &om, &lm, &rm);
    EXPECT_EQ(out.value(0, 0), want) << kOnes << " ones";
  }
}

// A NaN in A makes its row of C NaN (it must not round into infinity);
// beta = 0 ignores a NaN already in C, as the f32 service does.
TEST(BlasBf16, NaNStaysNaNAndBetaZeroIgnoresC) {
  clearServiceError();
  const int64_t m = 3, n = 4, k = 5;
  Bf16Matrix a(m, k, Layout::RowMajor), b(k, n, Layout::RowMajor),
      c(m, n, Layout::RowMajor);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t q = 0; q < k; ++q)
      a.at(i, q) = top(1.0f);
  for (int64_t q = 0; q < k; ++q)
    for (int64_t j = 0; j < n; ++j)
      b.at(q, j) = top(0.5f);
  a.at(1, 2) = top(std::numeric_limits<float>::quiet_NaN());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      c.at(i, j) = top(std::numeric_limits<float>::quiet_NaN());
  grove_memref_u16_2 am = a.memref(), bm = b.memref(), cm = c.memref();
  _mlir_ciface_grove_rt_matmul_bf16(0, 0, 1.0f, 0.0f, &am, &bm, &cm);
  for (int64_t j = 0; j < n; ++j) {
    EXPECT_EQ(c.value(0, j), 2.5f);
    EXPECT_TRUE(std::isnan(c.value(1, j))) << "column " << j;
    EXPECT_EQ(c.value(2, j), 2.5f);
  }
}

TEST(BlasBf16, EmptySizesAndZeroK) {
  clearServiceError();
  std::mt19937 rng(5);
  // m = 0 or n = 0: nothing to write; K = 0: C = beta * C.
  for (Layout lc : {Layout::RowMajor, Layout::ColMajor, Layout::BothStrided}) {
    checkGemm({0, 5, 3, false, false, 1.0f, 1.0f}, Layout::RowMajor,
              Layout::RowMajor, lc, rng);
    checkGemm({4, 0, 3, true, false, 1.0f, 1.0f}, Layout::RowMajor,
              Layout::RowMajor, lc, rng);
    checkGemm({4, 5, 0, false, true, 1.0f, 2.0f}, Layout::RowMajor,
              Layout::RowMajor, lc, rng);
    checkGemm({0, 0, 0, false, false, 1.0f, 0.0f}, Layout::RowMajor,
              Layout::RowMajor, lc, rng);
    if (::testing::Test::HasFatalFailure())
      return;
  }
  // K = 0 and beta = 0 clear C, a NaN included; A and B may be NULL.
  Bf16Matrix c(3, 2, Layout::RowMajor);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j)
      c.at(i, j) = top(std::numeric_limits<float>::quiet_NaN());
  grove_memref_u16_2 am = {nullptr, nullptr, 0, {3, 0}, {0, 1}},
                     bm = {nullptr, nullptr, 0, {0, 2}, {2, 1}},
                     cm = c.memref();
  _mlir_ciface_grove_rt_matmul_bf16(0, 0, 1.0f, 0.0f, &am, &bm, &cm);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j)
      EXPECT_EQ(c.at(i, j), 0) << "at (" << i << ", " << j << ")";
}

/// Takes the pending service error, expecting one that names `service`.
void expectError(const char *service, const char *what) {
  std::string message;
  grove_status status;
  ASSERT_TRUE(takeServiceError(message, status));
  EXPECT_EQ(status, GROVE_ERROR_INTERNAL);
  EXPECT_EQ(message.rfind(std::string(service) + ": ", 0), 0u) << message;
  EXPECT_NE(message.find(what), std::string::npos) << message;
}

TEST(BlasBf16, ShapeMismatchIsReportedWithoutWriting) {
  clearServiceError();
  Bf16Matrix a(2, 3, Layout::RowMajor), b(2, 3, Layout::RowMajor),
      c(2, 2, Layout::RowMajor);
  grove_memref_u16_2 am = a.memref(), bm = b.memref(), cm = c.memref();
  _mlir_ciface_grove_rt_matmul_bf16(0, 0, 1.0f, 0.0f, &am, &bm, &cm);
  expectError("grove_rt_matmul_bf16",
              "shape mismatch: op(A) is 2x3, op(B) is 2x3, C is 2x2");
  for (uint16_t x : c.buffer)
    EXPECT_EQ(x, kGuard);
  // NULL C with a non-empty shape.
  grove_memref_u16_2 nullC = {nullptr, nullptr, 0, {2, 2}, {2, 1}};
  _mlir_ciface_grove_rt_matmul_bf16(0, 1, 1.0f, 0.0f, &am, &am, &nullC);
  expectError("grove_rt_matmul_bf16", "C is NULL");
}

/// A contiguous rank-3 bf16 memref over `v`.
grove_memref_u16_3 memref3(std::vector<uint16_t> &v, int64_t batch,
                           int64_t rows, int64_t cols) {
  return {v.data(), v.data(), 0, {batch, rows, cols}, {rows * cols, cols, 1}};
}

/// Batched A (batch x m x k) B (batch x k x n, or a shared k x n with
/// batch stride 0) with beta = 1 against the reference, on `batch`
/// products; returns through gtest assertions.
void checkBatched(int64_t batch, int64_t m, int64_t n, int64_t k, bool sharedB,
                  std::mt19937 &rng) {
  SCOPED_TRACE(::testing::Message()
               << "batch=" << batch << " m=" << m << " n=" << n << " k=" << k
               << " sharedB=" << sharedB);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<uint16_t> a(size_t(batch * m * k)),
      b(size_t((sharedB ? 1 : batch) * k * n)), c(size_t(batch * m * n));
  for (std::vector<uint16_t> *v : {&a, &b, &c})
    for (uint16_t &x : *v)
      x = top(dist(rng));
  const std::vector<uint16_t> c0 = c;
  grove_memref_u16_3 am = memref3(a, batch, m, k), bm = memref3(b, batch, k, n),
                     cm = memref3(c, batch, m, n);
  if (sharedB)
    bm.strides[0] = 0;
  _mlir_ciface_grove_rt_batch_matmul_bf16(0, 0, 1.0f, 1.0f, &am, &bm, &cm);
  std::string message;
  grove_status status;
  ASSERT_FALSE(takeServiceError(message, status)) << message;
  for (int64_t q = 0; q < batch; ++q)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const uint16_t *bq = b.data() + (sharedB ? 0 : q * k * n);
        double sum = 0, magnitude = 0;
        for (int64_t p = 0; p < k; ++p) {
          double t = double(widen(a[q * m * k + i * k + p])) *
                     double(widen(bq[p * n + j]));
          sum += t;
          magnitude += std::fabs(t);
        }
        const size_t at = size_t(q * m * n + i * n + j);
        const double old = widen(c0[at]);
        ASSERT_NEAR(widen(c[at]), sum + old,
                    (std::ldexp(1.0, -8) + k * std::ldexp(1.0, -23)) *
                        (magnitude + std::fabs(old)))
            << "batch " << q << " (" << i << ", " << j << ")";
      }
}

TEST(BlasBf16, BatchedMatchesReference) {
  clearServiceError();
  std::mt19937 rng(13);
  checkBatched(3, 4, 5, 6, false, rng);
  checkBatched(3, 4, 5, 6, true, rng);
  checkBatched(2, 70, 90, 300, false, rng); // 3.8 MFLOP a product
}

TEST(BlasBf16, BatchedRejectsMismatchedBatchWithoutWriting) {
  clearServiceError();
  std::vector<uint16_t> a(8, top(1.0f)), b(8, top(1.0f)), c(8, kGuard);
  grove_memref_u16_3 am = memref3(a, 2, 2, 2), bm = memref3(b, 1, 2, 2),
                     cm = memref3(c, 2, 2, 2);
  _mlir_ciface_grove_rt_batch_matmul_bf16(0, 0, 1.0f, 0.0f, &am, &bm, &cm);
  expectError("grove_rt_batch_matmul_bf16", "batch sizes differ");
  for (uint16_t x : c)
    EXPECT_EQ(x, kGuard);
  // Matching batches, mismatched products: the 2-D service's message.
  grove_memref_u16_3 bad = memref3(b, 2, 1, 4);
  _mlir_ciface_grove_rt_batch_matmul_bf16(0, 0, 1.0f, 0.0f, &am, &bad, &cm);
  expectError("grove_rt_matmul_bf16", "shape mismatch");
  for (uint16_t x : c)
    EXPECT_EQ(x, kGuard);
}

// Products under the one-thread size (4 MFLOP; these are 0.19) but together
// over it go one a thread over the OpenMP team (scripts/test.sh runs the
// ParallelFor* suites again on two threads); a mismatch among them is
// rejected before the team starts.
TEST(ParallelForBatchedGemmBf16, SmallProductsSpreadOverTheTeamMatch) {
  clearServiceError();
  std::mt19937 rng(17);
  checkBatched(24, 48, 40, 50, false, rng);
}

TEST(ParallelForBatchedGemmBf16, MismatchIsRejectedWithoutWriting) {
  clearServiceError();
  const int64_t batch = 24, m = 48, n = 40, k = 50;
  std::vector<uint16_t> a(size_t(batch * m * k), top(1.0f)),
      b(size_t(batch * (k + 1) * n), top(1.0f)),
      c(size_t(batch * m * n), kGuard);
  grove_memref_u16_3 am = memref3(a, batch, m, k),
                     bm = memref3(b, batch, k + 1, n),
                     cm = memref3(c, batch, m, n);
  _mlir_ciface_grove_rt_batch_matmul_bf16(0, 0, 1.0f, 0.0f, &am, &bm, &cm);
  expectError("grove_rt_matmul_bf16", "shape mismatch");
  for (uint16_t x : c)
    EXPECT_EQ(x, kGuard);
}

} // namespace

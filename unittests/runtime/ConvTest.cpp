//===- ConvTest.cpp - The host convolution service against a reference ---===//

#include "TestUtil.h"

#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

using namespace grove::test;

namespace {

constexpr float kGuard = 777.0f;

/// A 5-D strided view into a guard-filled buffer (exploded memref), dense
/// row-major unless `pad` adds elements after each innermost row.
struct Tensor5 {
  std::vector<float> buffer;
  int64_t size[5], stride[5];

  Tensor5(std::initializer_list<int64_t> sizes, int64_t pad = 0) {
    int i = 0;
    for (int64_t s : sizes)
      size[i++] = s;
    stride[4] = 1;
    stride[3] = size[4] + pad;
    for (int d = 2; d >= 0; --d)
      stride[d] = stride[d + 1] * size[d + 1];
    buffer.assign(size_t(stride[0] * size[0]) + 8, kGuard);
  }
  float &at(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e) {
    return buffer[a * stride[0] + b * stride[1] + c * stride[2] +
                  d * stride[3] + e * stride[4]];
  }
  void fill(std::mt19937 &rng) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (int64_t a = 0; a < size[0]; ++a)
      for (int64_t b = 0; b < size[1]; ++b)
        for (int64_t c = 0; c < size[2]; ++c)
          for (int64_t d = 0; d < size[3]; ++d)
            for (int64_t e = 0; e < size[4]; ++e)
              at(a, b, c, d, e) = dist(rng);
  }
};

/// `t` as generated code passes a memref: a descriptor, by pointer.
grove_memref_f32_5 descriptor(Tensor5 &t) {
  float *p = t.buffer.data();
  grove_memref_f32_5 m{p, p, 0, {}, {}};
  for (int i = 0; i < 5; ++i)
    m.sizes[i] = t.size[i], m.strides[i] = t.stride[i];
  return m;
}

void callConv(Tensor5 &x, Tensor5 &w, Tensor5 &y, int64_t sh, int64_t sw,
              int64_t dh, int64_t dw, const int64_t pad[4] = nullptr) {
  const int64_t none[4] = {0, 0, 0, 0};
  if (!pad)
    pad = none;
  grove_memref_f32_5 xm = descriptor(x), wm = descriptor(w), ym = descriptor(y);
  _mlir_ciface_grove_rt_conv2d_f32(&xm, &wm, &ym, pad[0], pad[1], pad[2],
                                   pad[3], sh, sw, dh, dw);
}

struct Case {
  int64_t n, g, cg, fg, h, w, kh, kw, sh, sw, dh, dw;
  int64_t extra; // input rows/columns beyond what the output reads
  int64_t padX;  // elements after each input row (a strided input)
  int64_t padY;  // elements after each output row (a strided result)
  int64_t pad[4] = {0, 0, 0, 0}; // zero padding: top, left, bottom, right
};

/// Runs one convolution against a double-precision loop; checks that the
/// result buffer outside the view is untouched and the inputs unchanged.
void checkConv(const Case &c, std::mt19937 &rng) {
  SCOPED_TRACE(::testing::Message()
               << "n=" << c.n << " g=" << c.g << " cg=" << c.cg
               << " fg=" << c.fg << " " << c.h << "x" << c.w << " k=" << c.kh
               << "x" << c.kw << " s=" << c.sh << "," << c.sw << " d=" << c.dh
               << "," << c.dw << " extra=" << c.extra << " padX=" << c.padX
               << " padY=" << c.padY << " pad=" << c.pad[0] << "," << c.pad[1]
               << "," << c.pad[2] << "," << c.pad[3]);
  int64_t oh = (c.h + c.pad[0] + c.pad[2] - c.dh * (c.kh - 1) - 1) / c.sh + 1;
  int64_t ow = (c.w + c.pad[1] + c.pad[3] - c.dw * (c.kw - 1) - 1) / c.sw + 1;
  Tensor5 x({c.n, c.g, c.cg, c.h + c.extra, c.w + c.extra}, c.padX);
  Tensor5 w({c.g, c.fg, c.cg, c.kh, c.kw});
  Tensor5 y({c.n, c.g, c.fg, oh, ow}, c.padY);
  x.fill(rng);
  w.fill(rng);
  std::vector<float> xBefore = x.buffer, wBefore = w.buffer;
  callConv(x, w, y, c.sh, c.sw, c.dh, c.dw, c.pad);
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t g = 0; g < c.g; ++g)
      for (int64_t f = 0; f < c.fg; ++f)
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j) {
            double sum = 0;
            for (int64_t ch = 0; ch < c.cg; ++ch)
              for (int64_t a = 0; a < c.kh; ++a)
                for (int64_t b = 0; b < c.kw; ++b) {
                  int64_t r = i * c.sh + a * c.dh - c.pad[0];
                  int64_t q = j * c.sw + b * c.dw - c.pad[1];
                  if (r < 0 || r >= c.h + c.extra || q < 0 ||
                      q >= c.w + c.extra)
                    continue; // padding
                  sum += double(x.at(n, g, ch, r, q)) *
                         double(w.at(g, f, ch, a, b));
                }
            ASSERT_NEAR(y.at(n, g, f, i, j), sum,
                        1e-5 * (1 + c.cg * c.kh * c.kw))
                << "at (" << n << ", " << g << ", " << f << ", " << i << ", "
                << j << ")";
            y.at(n, g, f, i, j) = kGuard; // checked; now must be a guard
          }
  for (size_t i = 0; i < y.buffer.size(); ++i)
    ASSERT_EQ(y.buffer[i], kGuard) << "result buffer clobbered at " << i;
  EXPECT_EQ(x.buffer, xBefore);
  EXPECT_EQ(w.buffer, wBefore);
}

TEST(Conv, MatchesNaiveLoop) {
  std::mt19937 rng(13);
  const Case cases[] = {
      // n g cg fg  h  w kh kw sh sw dh dw extra padX padY
      {1, 1, 3, 4, 9, 9, 3, 3, 1, 1, 1, 1, 0, 0, 0},    // plain 3x3
      {2, 2, 8, 16, 12, 10, 3, 3, 1, 1, 1, 1, 0, 0, 0}, // grouped
      {2, 1, 5, 7, 11, 13, 3, 3, 2, 2, 1, 1, 0, 0, 0},  // strided
      {1, 2, 4, 4, 13, 13, 3, 3, 1, 1, 2, 2, 0, 0, 0},  // dilated
      {1, 1, 3, 8, 15, 15, 7, 7, 2, 2, 1, 1, 0, 0, 0},  // 7x7 stem
      {1, 4, 2, 3, 8, 9, 1, 3, 1, 2, 1, 1, 0, 0, 0},    // 1x3, mixed
      {2, 2, 16, 32, 16, 16, 3, 3, 1, 1, 1, 1, 0, 0, 0},
      {1, 1, 3, 4, 9, 9, 3, 3, 2, 2, 1, 1, 1, 0, 0},   // unread rows/cols
      {1, 2, 4, 6, 10, 10, 3, 3, 1, 1, 1, 1, 0, 3, 2}, // strided x and y
  };
  for (const Case &c : cases) {
    checkConv(c, rng);
    if (::testing::Test::HasFatalFailure())
      return;
  }
}

TEST(Conv, PadsLikeAZeroBorder) {
  // The compiler folds a materialised zero padding into the call.
  std::mt19937 rng(23);
  const Case cases[] = {
      // n g cg fg  h  w kh kw sh sw dh dw extra padX padY {t, l, b, r}
      {2, 1, 3, 4, 9, 9, 3, 3, 1, 1, 1, 1, 0, 0, 0, {1, 1, 1, 1}},
      {2, 2, 8, 8, 14, 14, 3, 3, 1, 1, 1, 1, 0, 0, 0, {1, 1, 1, 1}},
      {1, 1, 3, 5, 8, 9, 2, 3, 2, 1, 1, 1, 0, 0, 0, {0, 1, 1, 0}},
      {2, 1, 3, 8, 15, 15, 7, 7, 2, 2, 1, 1, 0, 0, 0, {3, 3, 3, 3}},
      {1, 2, 4, 4, 13, 13, 3, 3, 1, 1, 2, 2, 0, 0, 0, {2, 2, 2, 2}},
      {1, 1, 3, 4, 10, 10, 3, 3, 2, 2, 1, 1, 0, 0, 0, {1, 1, 1, 1}},
      {1, 1, 3, 4, 9, 9, 3, 3, 2, 2, 1, 1, 1, 2, 1, {1, 1, 1, 1}},
      // A result smaller than the padded input allows: the bottom and
      // right padding are not reached (the service trims them).
      {1, 2, 2, 3, 9, 8, 3, 3, 2, 2, 1, 1, 2, 0, 0, {1, 2, 1, 2}},
  };
  for (int64_t n : {1, 2})
    for (Case c : cases) {
      c.n = n;
      checkConv(c, rng);
      if (::testing::Test::HasFatalFailure())
        return;
    }
}

TEST(Conv, ReusesItsPrimitivesAcrossCallsAndBatches) {
  // The same shape twice (a cached primitive), then another batch size.
  std::mt19937 rng(17);
  for (int64_t n : {3, 3, 1}) {
    checkConv({n, 2, 8, 8, 14, 14, 3, 3, 1, 1, 1, 1, 0, 0, 0}, rng);
    if (::testing::Test::HasFatalFailure())
      return;
  }
}

TEST(Conv, RebuildsShapesItDroppedBeyondItsBound) {
  // With room for 2 shapes, 4 batch sizes in turn: every call after the
  // first round finds its shape dropped and builds it again. Then two
  // threads with room for 1: each drops the shape the other may be running.
  ASSERT_EQ(setenv("GROVE_CONV_CACHE_SHAPES", "2", 1), 0);
  std::mt19937 rng(29);
  for (int round = 0; round < 2; ++round)
    for (int64_t n : {1, 2, 3, 4}) {
      checkConv({n, 2, 8, 8, 10, 10, 3, 3, 1, 1, 1, 1, 0, 0, 0, {1, 1, 1, 1}},
                rng);
      if (::testing::Test::HasFatalFailure())
        return;
    }
  ASSERT_EQ(setenv("GROVE_CONV_CACHE_SHAPES", "1", 1), 0);
  auto worker = [](unsigned seed, int64_t n) {
    std::mt19937 local(seed);
    for (int i = 0; i < 6; ++i)
      checkConv({n + i % 2, 1, 4, 8, 9, 9, 3, 3, 1, 1, 1, 1, 0, 0, 0}, local);
  };
  std::thread a(worker, 31, 2), b(worker, 37, 4);
  a.join();
  b.join();
  unsetenv("GROVE_CONV_CACHE_SHAPES");
}

TEST(Conv, ZeroSizedProblems) {
  // No input channels: a result of zeros. No images: nothing written.
  std::mt19937 rng(19);
  checkConv({1, 1, 0, 4, 5, 5, 3, 3, 1, 1, 1, 1, 0, 0, 0}, rng);
  checkConv({0, 2, 3, 4, 5, 5, 3, 3, 1, 1, 1, 1, 0, 0, 0}, rng);
}

TEST(Conv, BadArgumentsDoNotTouchMemory) {
  Tensor5 x({1, 1, 3, 6, 6}), w({1, 4, 2, 3, 3}), y({1, 1, 4, 4, 4});
  callConv(x, w, y, 1, 1, 1, 1); // channels: 3 vs 2
  for (float v : y.buffer)
    EXPECT_EQ(v, kGuard);
  Tensor5 w3({1, 4, 3, 3, 3}), big({1, 1, 4, 5, 5});
  callConv(x, w3, big, 1, 1, 1, 1); // a 5x5 result reads past the input
  for (float v : big.buffer)
    EXPECT_EQ(v, kGuard);
  callConv(x, w3, y, 0, 1, 1, 1); // zero stride
  for (float v : y.buffer)
    EXPECT_EQ(v, kGuard);
  EXPECT_TRUE(clearParkedServiceError());
}

/// Runs one weight gradient (dw from x and dy, `c`'s geometry) against a
/// double-precision loop; checks dw's buffer outside the view and the
/// inputs as checkConv does.
void checkWeightGrad(const Case &c, std::mt19937 &rng, int64_t padDw = 0) {
  SCOPED_TRACE(::testing::Message()
               << "weight grad n=" << c.n << " g=" << c.g << " cg=" << c.cg
               << " fg=" << c.fg << " " << c.h << "x" << c.w << " k=" << c.kh
               << "x" << c.kw << " s=" << c.sh << "," << c.sw << " d=" << c.dh
               << "," << c.dw << " pad=" << c.pad[0] << "," << c.pad[1] << ","
               << c.pad[2] << "," << c.pad[3]);
  int64_t oh = (c.h + c.pad[0] + c.pad[2] - c.dh * (c.kh - 1) - 1) / c.sh + 1;
  int64_t ow = (c.w + c.pad[1] + c.pad[3] - c.dw * (c.kw - 1) - 1) / c.sw + 1;
  Tensor5 x({c.n, c.g, c.cg, c.h + c.extra, c.w + c.extra}, c.padX);
  Tensor5 dy({c.n, c.g, c.fg, oh, ow}, c.padY);
  Tensor5 dw({c.g, c.fg, c.cg, c.kh, c.kw}, padDw);
  x.fill(rng);
  dy.fill(rng);
  std::vector<float> xBefore = x.buffer, dyBefore = dy.buffer;
  grove_memref_f32_5 xm = descriptor(x), dym = descriptor(dy),
                     dwm = descriptor(dw);
  _mlir_ciface_grove_rt_conv2d_weight_grad_f32(&xm, &dym, &dwm, c.pad[0],
                                               c.pad[1], c.pad[2], c.pad[3],
                                               c.sh, c.sw, c.dh, c.dw);
  for (int64_t g = 0; g < c.g; ++g)
    for (int64_t f = 0; f < c.fg; ++f)
      for (int64_t ch = 0; ch < c.cg; ++ch)
        for (int64_t a = 0; a < c.kh; ++a)
          for (int64_t b = 0; b < c.kw; ++b) {
            double sum = 0;
            for (int64_t n = 0; n < c.n; ++n)
              for (int64_t i = 0; i < oh; ++i)
                for (int64_t j = 0; j < ow; ++j) {
                  int64_t r = i * c.sh + a * c.dh - c.pad[0];
                  int64_t q = j * c.sw + b * c.dw - c.pad[1];
                  if (r < 0 || r >= c.h + c.extra || q < 0 ||
                      q >= c.w + c.extra)
                    continue; // padding
                  sum += double(x.at(n, g, ch, r, q)) *
                         double(dy.at(n, g, f, i, j));
                }
            ASSERT_NEAR(dw.at(g, f, ch, a, b), sum, 1e-5 * (1 + c.n * oh * ow))
                << "at (" << g << ", " << f << ", " << ch << ", " << a << ", "
                << b << ")";
            dw.at(g, f, ch, a, b) = kGuard; // checked; now must be a guard
          }
  for (size_t i = 0; i < dw.buffer.size(); ++i)
    ASSERT_EQ(dw.buffer[i], kGuard) << "gradient buffer clobbered at " << i;
  EXPECT_EQ(x.buffer, xBefore);
  EXPECT_EQ(dy.buffer, dyBefore);
}

TEST(ConvWeightGrad, MatchesNaiveLoop) {
  std::mt19937 rng(41);
  const Case cases[] = {
      // n g cg fg  h  w kh kw sh sw dh dw extra padX padY {t, l, b, r}
      {2, 1, 3, 4, 9, 9, 3, 3, 1, 1, 1, 1, 0, 0, 0},
      {3, 2, 8, 16, 12, 10, 3, 3, 1, 1, 1, 1, 0, 0, 0, {1, 1, 1, 1}},
      {2, 1, 5, 7, 11, 13, 3, 3, 2, 2, 1, 1, 0, 0, 0, {1, 1, 1, 1}},
      {1, 2, 4, 4, 13, 13, 3, 3, 1, 1, 2, 2, 0, 0, 0, {2, 2, 2, 2}},
      {2, 1, 1, 16, 8, 8, 3, 3, 1, 1, 1, 1, 0, 0, 0, {1, 1, 1, 1}},
      {4, 4, 16, 8, 8, 8, 3, 3, 1, 1, 1, 1, 0, 0, 0, {1, 1, 1, 1}},
      {1, 4, 2, 3, 8, 9, 1, 3, 1, 2, 1, 1, 0, 0, 0, {0, 1, 1, 0}},
      {2, 1, 3, 4, 9, 9, 3, 3, 2, 2, 1, 1, 1, 2, 1, {1, 1, 1, 1}},
      {1, 2, 2, 3, 9, 8, 3, 3, 2, 2, 1, 1, 2, 0, 0, {1, 2, 1, 2}},
      {5, 1, 16, 32, 4, 4, 3, 3, 1, 1, 1, 1, 0, 0, 0, {1, 1, 1, 1}},
  };
  for (const Case &c : cases) {
    checkWeightGrad(c, rng);
    if (::testing::Test::HasFatalFailure())
      return;
  }
}

TEST(ConvWeightGrad, WritesAStridedGradient) {
  // dw with gaps after each kernel row: the reorder back writes the view
  // only (checkWeightGrad checks the gaps keep their guards).
  std::mt19937 rng(47);
  checkWeightGrad(
      {3, 2, 8, 16, 10, 10, 3, 3, 1, 1, 1, 1, 0, 0, 0, {1, 1, 1, 1}}, rng,
      /*padDw=*/2);
  checkWeightGrad({2, 1, 4, 8, 9, 9, 3, 3, 2, 2, 1, 1, 0, 0, 0}, rng, 1);
}

TEST(ConvWeightGrad, ZeroSizedProblems) {
  // No images or no output: a gradient of zeros. No channels: nothing.
  std::mt19937 rng(43);
  checkWeightGrad({0, 1, 3, 4, 5, 5, 3, 3, 1, 1, 1, 1, 0, 0, 0}, rng);
  checkWeightGrad({2, 1, 0, 4, 5, 5, 3, 3, 1, 1, 1, 1, 0, 0, 0}, rng);
}

TEST(ConvWeightGrad, BadArgumentsDoNotTouchMemory) {
  Tensor5 x({1, 1, 3, 6, 6}), dy({1, 1, 4, 4, 4}), dw({1, 4, 2, 3, 3});
  auto call = [](Tensor5 &x, Tensor5 &dy, Tensor5 &dw, int64_t stride) {
    grove_memref_f32_5 xm = descriptor(x), dym = descriptor(dy),
                       dwm = descriptor(dw);
    _mlir_ciface_grove_rt_conv2d_weight_grad_f32(&xm, &dym, &dwm, 0, 0, 0, 0,
                                                 stride, stride, 1, 1);
  };
  call(x, dy, dw, 1); // channels: 3 vs 2
  for (float v : dw.buffer)
    EXPECT_EQ(v, kGuard);
  EXPECT_TRUE(clearParkedServiceError());
  Tensor5 dw3({1, 4, 3, 3, 3}), big({1, 1, 4, 5, 5});
  call(x, big, dw3, 1); // a 5x5 output gradient reads past the input
  for (float v : dw3.buffer)
    EXPECT_EQ(v, kGuard);
  EXPECT_TRUE(clearParkedServiceError());
  call(x, dy, dw3, 0); // zero stride
  for (float v : dw3.buffer)
    EXPECT_EQ(v, kGuard);
  EXPECT_TRUE(clearParkedServiceError());
  // No images but a gradient to write (zeros), through a NULL buffer.
  grove_memref_f32_5 xm{
      nullptr, nullptr, 0, {0, 1, 3, 6, 6}, {108, 108, 36, 6, 1}};
  grove_memref_f32_5 dym{
      nullptr, nullptr, 0, {0, 1, 4, 4, 4}, {64, 64, 16, 4, 1}};
  grove_memref_f32_5 dwm{
      nullptr, nullptr, 0, {1, 4, 3, 3, 3}, {108, 27, 9, 3, 1}};
  _mlir_ciface_grove_rt_conv2d_weight_grad_f32(&xm, &dym, &dwm, 0, 0, 0, 0, 1,
                                               1, 1, 1);
  EXPECT_TRUE(clearParkedServiceError());
}

} // namespace

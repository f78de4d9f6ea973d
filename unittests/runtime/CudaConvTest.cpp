//===- CudaConvTest.cpp - The cuDNN convolution service on a GPU ---------===//
//
// grove_rt_cuda_conv2d_<type> (runtime/src/cuda/Conv.cpp) run the way
// generated code runs it: from a model's entry function inside
// grove_invoke, on device tensors. Each case is checked against a direct
// loop nest in double on the host, on fresh random inputs (the seed is
// printed on failure); f32 within 1e-5 of the sum of |terms| (no TF32),
// bf16 within 2^-7 of it (inputs and result rounded to bf16). Skipped,
// saying so, where there is no GPU or no cuDNN.
//
//===----------------------------------------------------------------------===//

#include "grove/abi.h"
#include "grove/runtime.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

struct Shape {
  int64_t n, g, cg, h, w, fg, kh, kw;
  int64_t pad[2], stride[2], dilation[2];
  int64_t oh() const {
    return (h + 2 * pad[0] - dilation[0] * (kh - 1) - 1) / stride[0] + 1;
  }
  int64_t ow() const {
    return (w + 2 * pad[1] - dilation[1] * (kw - 1) - 1) / stride[1] + 1;
  }
};

/// MLIR's rank-4 memref descriptor (docs/abi.md).
struct Desc4 {
  void *allocated, *aligned;
  int64_t offset, sizes[4], strides[4];
};

// What the entry below runs; set by each test before grove_invoke.
Shape gShape;
bool gBf16 = false;
bool gPackedWeights = true;

/// The entry "conv": inputs x (N x G·Cg x H x W), w (G·Fg x Cg x Kh x Kw)
/// and y (N x G·Fg x Oh x Ow), all device memory; writes y as generated
/// code does, through 5-D grouped views.
void convEntry(void **args) {
  const Shape &s = gShape;
  auto *x = static_cast<Desc4 *>(args[0]);
  auto *w = static_cast<Desc4 *>(args[1]);
  auto *y = static_cast<Desc4 *>(args[2]);
  // Weights "not packed": claim a row stride one larger (the service must
  // refuse, not read past the rows).
  int64_t wExtra = gPackedWeights ? 0 : 1;
  int64_t xv[11] = {
      x->offset,     s.n,           s.g,           s.cg,
      s.h,           s.w,           x->strides[0], s.cg * x->strides[1],
      x->strides[1], x->strides[2], x->strides[3]};
  int64_t wv[11] = {w->offset,
                    s.g,
                    s.fg,
                    s.cg,
                    s.kh,
                    s.kw,
                    s.fg * w->strides[0],
                    w->strides[0],
                    w->strides[1],
                    w->strides[2] + wExtra,
                    w->strides[3]};
  int64_t yv[11] = {
      y->offset,     s.n,           s.g,           s.fg,
      s.oh(),        s.ow(),        y->strides[0], s.fg * y->strides[1],
      y->strides[1], y->strides[2], y->strides[3]};
  // As generated code calls it: one descriptor per memref, by pointer
  // (view[0] the offset, then 5 sizes and 5 strides).
  auto desc = [](auto &m, void *aligned, const int64_t *view) {
    using T = std::remove_pointer_t<decltype(m.aligned)>;
    m.allocated = nullptr;
    m.aligned = static_cast<T *>(aligned);
    m.offset = view[0];
    for (int i = 0; i < 5; ++i)
      m.sizes[i] = view[1 + i], m.strides[i] = view[6 + i];
  };
  if (gBf16) {
    grove_memref_u16_5 xm, wm, ym;
    desc(xm, x->aligned, xv), desc(wm, w->aligned, wv),
        desc(ym, y->aligned, yv);
    _mlir_ciface_grove_rt_cuda_conv2d_bf16(&xm, &wm, &ym, s.pad[0], s.pad[1],
                                           s.stride[0], s.stride[1],
                                           s.dilation[0], s.dilation[1]);
  } else {
    grove_memref_f32_5 xm, wm, ym;
    desc(xm, x->aligned, xv), desc(wm, w->aligned, wv),
        desc(ym, y->aligned, yv);
    _mlir_ciface_grove_rt_cuda_conv2d_f32(&xm, &wm, &ym, s.pad[0], s.pad[1],
                                          s.stride[0], s.stride[1],
                                          s.dilation[0], s.dilation[1]);
  }
}
const grove_packed_fn kConvEntries[1] = {convEntry};

uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1); // round to nearest even
  return uint16_t(u >> 16);
}
float fromBf16(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// Runs gShape through the service; returns the status and fills `got`
/// (device result) and `ref`/`scale` (host reference, sum of |terms|).
grove_status runCase(std::vector<double> &got, std::vector<double> &ref,
                     std::vector<double> &scale, unsigned seed) {
  const Shape &s = gShape;
  const char *type = gBf16 ? "bf16" : "f32";
  const size_t elem = gBf16 ? 2 : 4;
  int64_t c = s.g * s.cg, f = s.g * s.fg, oh = s.oh(), ow = s.ow();
  auto input = [&](const char *name, std::initializer_list<int64_t> dims) {
    std::string out = std::string("{\"name\":\"") + name + "\",\"dtype\":\"" +
                      type + "\",\"shape\":[";
    for (int64_t v : dims)
      out += (out.back() == '[' ? "" : ",") + std::to_string(v);
    return out + "]}";
  };
  std::string desc =
      "{\"format\":\"grove-model\",\"version\":7,\"module\":\"convm\","
      "\"target\":\"cuda\",\"state\":[],\"entries\":[{\"name\":\"conv\","
      "\"args\":[{\"input\":0},{\"input\":1},{\"input\":2}],\"inputs\":[" +
      input("x", {s.n, c, s.h, s.w}) + "," + input("w", {f, s.cg, s.kh, s.kw}) +
      "," + input("y", {s.n, f, oh, ow}) + "],\"outputs\":[]}]}\n";
  grove_model_def model = {GROVE_ABI_VERSION, 1, "convm", desc.c_str(),
                           kConvEntries};
  grove_context *ctx = nullptr;
  if (grove_context_create(&model, &ctx) != GROVE_OK)
    return GROVE_ERROR_NO_DEVICE;

  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto fill = [&](size_t count) {
    std::vector<float> v(count);
    for (float &e : v)
      e = gBf16 ? fromBf16(toBf16(dist(rng))) : dist(rng);
    return v;
  };
  std::vector<float> hx = fill(size_t(s.n * c * s.h * s.w));
  std::vector<float> hw = fill(size_t(f * s.cg * s.kh * s.kw));
  size_t ny = size_t(s.n * f * oh * ow);
  // Device copies, in the element type.
  auto upload = [&](const std::vector<float> &v, size_t count) {
    void *d = nullptr;
    cudaMalloc(&d, count * elem);
    if (gBf16) {
      std::vector<uint16_t> h(count);
      for (size_t i = 0; i < v.size(); ++i)
        h[i] = toBf16(v[i]);
      cudaMemcpy(d, h.data(), count * elem, cudaMemcpyHostToDevice);
    } else if (!v.empty()) {
      cudaMemcpy(d, v.data(), count * elem, cudaMemcpyHostToDevice);
    }
    return d;
  };
  void *dx = upload(hx, hx.size()), *dw = upload(hw, hw.size());
  void *dy = upload(std::vector<float>(ny, 7.0f), ny); // overwritten
  int64_t xs[4] = {s.n, c, s.h, s.w}, ws[4] = {f, s.cg, s.kh, s.kw},
          ys[4] = {s.n, f, oh, ow};
  DLDataType dt =
      gBf16 ? DLDataType{kDLBfloat, 16, 1} : DLDataType{kDLFloat, 32, 1};
  DLTensor tx{dx, {kDLCUDA, 0}, 4, dt, xs, nullptr, 0};
  DLTensor tw{dw, {kDLCUDA, 0}, 4, dt, ws, nullptr, 0};
  DLTensor ty{dy, {kDLCUDA, 0}, 4, dt, ys, nullptr, 0};
  const DLTensor *in[3] = {&tx, &tw, &ty};
  grove_status status = grove_invoke(ctx, "conv", in, 3, nullptr, 0);

  got.assign(ny, 0.0);
  if (gBf16) {
    std::vector<uint16_t> h(ny);
    cudaMemcpy(h.data(), dy, ny * elem, cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < ny; ++i)
      got[i] = fromBf16(h[i]);
  } else {
    std::vector<float> h(ny);
    cudaMemcpy(h.data(), dy, ny * elem, cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < ny; ++i)
      got[i] = h[i];
  }
  cudaFree(dx);
  cudaFree(dw);
  cudaFree(dy);
  grove_context_destroy(ctx);

  ref.assign(ny, 0.0);
  scale.assign(ny, 0.0);
  for (int64_t b = 0; b < s.n; ++b)
    for (int64_t o = 0; o < f; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          int64_t grp = o / s.fg;
          double acc = 0, mag = 0;
          for (int64_t ci = 0; ci < s.cg; ++ci)
            for (int64_t p = 0; p < s.kh; ++p)
              for (int64_t q = 0; q < s.kw; ++q) {
                int64_t yy = i * s.stride[0] + p * s.dilation[0] - s.pad[0];
                int64_t xx = j * s.stride[1] + q * s.dilation[1] - s.pad[1];
                if (yy < 0 || yy >= s.h || xx < 0 || xx >= s.w)
                  continue;
                double t =
                    double(
                        hx[((b * c + grp * s.cg + ci) * s.h + yy) * s.w + xx]) *
                    double(hw[((o * s.cg + ci) * s.kh + p) * s.kw + q]);
                acc += t;
                mag += std::fabs(t);
              }
          size_t k = size_t(((b * f + o) * oh + i) * ow + j);
          ref[k] = acc;
          scale[k] = mag;
        }
  return status;
}

class CudaConv : public ::testing::Test {
protected:
  void SetUp() override {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
      GTEST_SKIP() << "no usable CUDA GPU here (cudaGetDeviceCount)";
    gBf16 = false;
    gPackedWeights = true;
  }

  void expectMatches(double rtol) {
    unsigned seed = std::random_device{}();
    std::vector<double> got, ref, scale;
    grove_status status = runCase(got, ref, scale, seed);
    std::string error = status == GROVE_OK ? "" : grove_last_error();
    // Said, not hidden: gpu-check.sh fails a GPU run with any skip.
    if (error.find("cuDNN") != std::string::npos &&
        (error.find("cannot load") != std::string::npos ||
         error.find("built without") != std::string::npos))
      GTEST_SKIP() << "no usable cuDNN here: " << error;
    ASSERT_EQ(status, GROVE_OK) << error << " (seed " << seed << ")";
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i)
      if (!(std::fabs(got[i] - ref[i]) <= rtol * scale[i] + 1e-6) && bad++ < 5)
        ADD_FAILURE() << "element " << i << ": " << got[i] << " vs " << ref[i]
                      << " (seed " << seed << ")";
    EXPECT_EQ(bad, 0u) << "of " << got.size();
  }
};

TEST_F(CudaConv, PaddedF32) {
  gShape = {3, 1, 5, 9, 11, 6, 3, 3, {1, 1}, {1, 1}, {1, 1}};
  expectMatches(1e-5);
}

TEST_F(CudaConv, GroupedStridedDilatedF32) {
  gShape = {2, 2, 4, 13, 12, 3, 3, 3, {2, 1}, {2, 2}, {2, 1}};
  expectMatches(1e-5);
}

TEST_F(CudaConv, ResNeStRadixConvF32) {
  // layer2's grouped 3x3 (radix 2), batch 4.
  gShape = {4, 2, 64, 28, 28, 64, 3, 3, {1, 1}, {1, 1}, {1, 1}};
  expectMatches(1e-5);
}

TEST_F(CudaConv, DepthwiseF32) {
  // One channel per group (Cg = Fg = 1), stride 2.
  gShape = {2, 8, 1, 11, 10, 1, 3, 3, {1, 1}, {2, 2}, {1, 1}};
  expectMatches(1e-5);
}

TEST_F(CudaConv, GroupedBF16) {
  gBf16 = true;
  gShape = {2, 2, 16, 14, 14, 8, 3, 3, {1, 1}, {2, 2}, {1, 1}};
  expectMatches(1.0 / 128);
}

TEST_F(CudaConv, UnpackedWeightsAreRefused) {
  gPackedWeights = false;
  gShape = {1, 1, 2, 5, 5, 2, 3, 3, {1, 1}, {1, 1}, {1, 1}};
  std::vector<double> got, ref, scale;
  EXPECT_NE(runCase(got, ref, scale, 1), GROVE_OK);
  EXPECT_NE(std::string(grove_last_error()).find("weights are not packed"),
            std::string::npos)
      << grove_last_error();
}

} // namespace

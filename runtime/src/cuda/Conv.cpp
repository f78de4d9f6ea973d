//===- Conv.cpp - The cuDNN convolution service (abi.h) -------------------===//
//
// Generated code calls grove_rt_cuda_conv2d_<type> for the convolutions
// convert-linalg-to-blas{target=cuda} finds: 5-D grouped views (input
// N x G x Cg x H x W, weights G x Fg x Cg x Kh x Kw, result N x G x Fg x
// Oh x Ow) of device memory, symmetric zero padding, strides and
// dilations. cuDNN runs each as one call, groups included, in place of
// the compiler's own pad + im2col copy + GEMM per group (docs/cuda.md).
// The algorithm is chosen once per shape by cuDNN's heuristics (what
// PyTorch does without cudnn.benchmark) and kept with its descriptors; a
// workspace comes from the context's stream-ordered block cache. f32 is
// computed without TF32 (CUDNN_FMA_MATH), as the cuBLAS GEMMs are; f16 and
// bf16 use tensor cores and accumulate in f32. cuDNN is loaded with dlopen
// on the first convolution (GROVE_CUDNN_LIBRARY overrides "libcudnn.so.9"),
// as the driver is: applications whose models do not use it need no cuDNN,
// and a missing one is an error message, not a loader failure.
//
//===----------------------------------------------------------------------===//

#include "Conv.h"

#include "CudaContext.h"
#include "DeviceView.h"

#include "Error.h"

#include "grove/abi.h"

#if GROVE_HAVE_CUDNN
#include <cudnn.h>

#include <dlfcn.h>
#endif

#include <array>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>

using namespace grove::rt;
using namespace grove::rt::cuda;

namespace {

/// An exploded 5-D memref descriptor as generated code passes it.
using View5 = DeviceView<5>;

enum class ConvType { F32, F16, BF16 };

} // namespace

#if GROVE_HAVE_CUDNN

namespace {

// The cuDNN functions the service calls, resolved from the loaded library.
#define GROVE_CUDNN_FUNCTIONS(X)                                               \
  X(cudnnGetVersion)                                                           \
  X(cudnnGetErrorString)                                                       \
  X(cudnnCreate)                                                               \
  X(cudnnDestroy)                                                              \
  X(cudnnSetStream)                                                            \
  X(cudnnCreateTensorDescriptor)                                               \
  X(cudnnDestroyTensorDescriptor)                                              \
  X(cudnnSetTensor4dDescriptorEx)                                              \
  X(cudnnCreateFilterDescriptor)                                               \
  X(cudnnDestroyFilterDescriptor)                                              \
  X(cudnnSetFilter4dDescriptor)                                                \
  X(cudnnCreateConvolutionDescriptor)                                          \
  X(cudnnDestroyConvolutionDescriptor)                                         \
  X(cudnnSetConvolution2dDescriptor)                                           \
  X(cudnnSetConvolutionGroupCount)                                             \
  X(cudnnSetConvolutionMathType)                                               \
  X(cudnnGetConvolutionForwardAlgorithm_v7)                                    \
  X(cudnnGetConvolutionForwardWorkspaceSize)                                   \
  X(cudnnConvolutionForward)

struct CudnnApi {
#define GROVE_CUDNN_MEMBER(name) decltype(&::name) name = nullptr;
  GROVE_CUDNN_FUNCTIONS(GROVE_CUDNN_MEMBER)
#undef GROVE_CUDNN_MEMBER
  std::string error; // why it cannot be used; empty when loaded
};

/// cuDNN, loaded once per process and never unloaded (handles live until
/// their contexts go).
const CudnnApi &cudnn() {
  static const CudnnApi api = [] {
    CudnnApi a;
    const char *env = std::getenv("GROVE_CUDNN_LIBRARY");
    std::string path = env && *env ? env : "libcudnn.so.9";
    void *lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *why = ::dlerror();
      a.error = "cannot load cuDNN '" + path + "' (" +
                (why ? why : "unknown reason") +
                "): install cuDNN 9, or compile the model without "
                "--conv-library";
      return a;
    }
#define GROVE_CUDNN_LOAD(name)                                                 \
  a.name = reinterpret_cast<decltype(a.name)>(::dlsym(lib, #name));            \
  if (!a.name) {                                                               \
    a.error = "cuDNN '" + path + "' lacks " #name " (cuDNN 9 is needed)";      \
    return a;                                                                  \
  }
    GROVE_CUDNN_FUNCTIONS(GROVE_CUDNN_LOAD)
#undef GROVE_CUDNN_LOAD
    if (size_t v = a.cudnnGetVersion(); v / 10000 != CUDNN_MAJOR)
      a.error = "cuDNN '" + path + "' is version " + std::to_string(v) +
                ", this runtime was built for " + std::to_string(CUDNN_MAJOR) +
                ".x";
    return a;
  }();
  return api;
}

std::string cudnnText(cudnnStatus_t s) {
  return cudnn().cudnnGetErrorString(s);
}

/// Descriptors and algorithm for one convolution shape.
struct Plan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo{};
  size_t workspace = 0;

  Plan() = default;
  Plan(const Plan &) = delete;
  ~Plan() {
    const CudnnApi &dnn = cudnn();
    if (x)
      dnn.cudnnDestroyTensorDescriptor(x);
    if (y)
      dnn.cudnnDestroyTensorDescriptor(y);
    if (w)
      dnn.cudnnDestroyFilterDescriptor(w);
    if (conv)
      dnn.cudnnDestroyConvolutionDescriptor(conv);
  }
};

/// What identifies a plan: type, the three views' sizes and strides (the
/// offsets do not matter), padding, strides and dilations.
using PlanKey = std::array<int64_t, 37>;

} // namespace

struct ConvService::Impl {
  cudnnHandle_t handle = nullptr;
  std::map<PlanKey, std::unique_ptr<Plan>> plans;

  ~Impl() {
    plans.clear();
    if (handle)
      cudnn().cudnnDestroy(handle);
  }
};

std::unique_ptr<ConvService> ConvService::create(CudaContext &ctx,
                                                 std::string &why) {
  const CudnnApi &dnn = cudnn();
  if (!dnn.error.empty()) {
    why = dnn.error;
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  if (cudnnStatus_t s = dnn.cudnnCreate(&impl->handle);
      s != CUDNN_STATUS_SUCCESS) {
    impl->handle = nullptr;
    why = "cannot create a cuDNN handle: " + cudnnText(s);
    return nullptr;
  }
  if (cudnnStatus_t s = dnn.cudnnSetStream(
          impl->handle, reinterpret_cast<cudaStream_t>(ctx.stream()));
      s != CUDNN_STATUS_SUCCESS) {
    why = "cannot set the cuDNN stream: " + cudnnText(s);
    return nullptr;
  }
  return std::unique_ptr<ConvService>(new ConvService(std::move(impl)));
}

namespace {

cudnnDataType_t dataType(ConvType t) {
  switch (t) {
  case ConvType::F32:
    return CUDNN_DATA_FLOAT;
  case ConvType::F16:
    return CUDNN_DATA_HALF;
  case ConvType::BF16:
    return CUDNN_DATA_BFLOAT16;
  }
  return CUDNN_DATA_FLOAT;
}

/// Builds the plan for one shape; empty with `why` set when cuDNN cannot
/// run it.
std::unique_ptr<Plan> makePlan(cudnnHandle_t handle, ConvType type,
                               const View5 &x, const View5 &w, const View5 &y,
                               const int64_t pad[2], const int64_t stride[2],
                               const int64_t dilation[2], std::string &why) {
  const CudnnApi &dnn = cudnn();
  auto plan = std::make_unique<Plan>();
  const cudnnDataType_t dt = dataType(type);
  const int g = int(w.size[0]), fg = int(w.size[1]), cg = int(w.size[2]);
  auto check = [&](cudnnStatus_t s, const char *what) {
    if (s != CUDNN_STATUS_SUCCESS && why.empty())
      why = std::string(what) + ": " + cudnnText(s);
    return s == CUDNN_STATUS_SUCCESS;
  };
  // N x (G·Cg) x H x W with the caller's strides: the group and channel
  // dimensions merge because the compiler's views split one channel axis.
  bool ok =
      check(dnn.cudnnCreateTensorDescriptor(&plan->x), "tensor descriptor") &&
      check(dnn.cudnnSetTensor4dDescriptorEx(
                plan->x, dt, int(x.size[0]), g * cg, int(x.size[3]),
                int(x.size[4]), int(x.stride[0]), int(x.stride[2]),
                int(x.stride[3]), int(x.stride[4])),
            "input descriptor") &&
      check(dnn.cudnnCreateTensorDescriptor(&plan->y), "tensor descriptor") &&
      check(dnn.cudnnSetTensor4dDescriptorEx(
                plan->y, dt, int(y.size[0]), g * fg, int(y.size[3]),
                int(y.size[4]), int(y.stride[0]), int(y.stride[2]),
                int(y.stride[3]), int(y.stride[4])),
            "result descriptor") &&
      check(dnn.cudnnCreateFilterDescriptor(&plan->w), "filter descriptor") &&
      check(dnn.cudnnSetFilter4dDescriptor(plan->w, dt, CUDNN_TENSOR_NCHW,
                                           g * fg, cg, int(w.size[3]),
                                           int(w.size[4])),
            "weight descriptor") &&
      check(dnn.cudnnCreateConvolutionDescriptor(&plan->conv),
            "convolution descriptor") &&
      check(dnn.cudnnSetConvolution2dDescriptor(
                plan->conv, int(pad[0]), int(pad[1]), int(stride[0]),
                int(stride[1]), int(dilation[0]), int(dilation[1]),
                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
            "convolution descriptor") &&
      check(dnn.cudnnSetConvolutionGroupCount(plan->conv, g), "group count") &&
      check(dnn.cudnnSetConvolutionMathType(
                plan->conv,
                type == ConvType::F32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH),
            "math type");
  if (!ok)
    return nullptr;

  // cuDNN's heuristics, best first; f32 keeps to FMA kernels (no TF32).
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int returned = 0;
  if (!check(dnn.cudnnGetConvolutionForwardAlgorithm_v7(
                 handle, plan->x, plan->w, plan->conv, plan->y,
                 CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf),
             "cuDNN found no forward algorithm"))
    return nullptr;
  // Applies `algo` with `math` to the plan when cuDNN can size its
  // workspace (it then runs it).
  auto take = [&](cudnnConvolutionFwdAlgo_t algo, cudnnMathType_t math) {
    size_t bytes = 0;
    if (dnn.cudnnSetConvolutionMathType(plan->conv, math) !=
            CUDNN_STATUS_SUCCESS ||
        dnn.cudnnGetConvolutionForwardWorkspaceSize(
            handle, plan->x, plan->w, plan->conv, plan->y, algo, &bytes) !=
            CUDNN_STATUS_SUCCESS)
      return false;
    plan->algo = algo;
    plan->workspace = bytes;
    return true;
  };
  for (int i = 0; i < returned; ++i) {
    const cudnnConvolutionFwdAlgoPerf_t &p = perf[i];
    if (p.status != CUDNN_STATUS_SUCCESS)
      continue;
    // The heuristics list entries of any math type whatever the descriptor
    // asked; on Ampere and later CUDNN_DEFAULT_MATH permits TF32, so f32
    // takes FMA entries only.
    if (type == ConvType::F32 && p.mathType != CUDNN_FMA_MATH)
      continue;
    if (take(p.algo, p.mathType))
      return plan;
  }
  // Implicit GEMM with FMA runs every f32 NCHW convolution.
  if (type == ConvType::F32 &&
      take(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_FMA_MATH))
    return plan;
  why = "cuDNN has no forward algorithm for this convolution (" +
        std::to_string(returned) + " candidates, none usable)";
  return nullptr;
}

/// With GROVE_CUDNN_LOG set, one stderr line per new plan: which algorithm
/// cuDNN's heuristics gave each shape (what the GPU check records next to
/// its timings, and what an accuracy failure needs to be read).
void logPlan(const Plan &plan, ConvType type, const View5 &x, const View5 &w,
             const View5 &y, const int64_t pad[2], const int64_t stride[2]) {
  static const bool enabled = [] {
    const char *v = std::getenv("GROVE_CUDNN_LOG");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  if (!enabled)
    return;
  static const char *const kAlgos[] = {"implicit_gemm", "implicit_precomp_gemm",
                                       "gemm",          "direct",
                                       "fft",           "fft_tiling",
                                       "winograd",      "winograd_nonfused"};
  const int a = int(plan.algo);
  const char *algo =
      a >= 0 && a < int(std::size(kAlgos)) ? kAlgos[a] : "unknown";
  const char *types[] = {"f32", "f16", "bf16"};
  std::fprintf(stderr,
               "grove cudnn: %s input %lldx%lldx%lldx%lld groups %lld filters "
               "%lldx%lldx%lld pad %lld,%lld stride %lld,%lld -> %lldx%lld: "
               "%s, workspace %zu bytes\n",
               types[int(type)], (long long)x.size[0],
               (long long)(x.size[1] * x.size[2]), (long long)x.size[3],
               (long long)x.size[4], (long long)w.size[0],
               (long long)(w.size[0] * w.size[1]), (long long)w.size[3],
               (long long)w.size[4], (long long)pad[0], (long long)pad[1],
               (long long)stride[0], (long long)stride[1], (long long)y.size[3],
               (long long)y.size[4], algo, plan.workspace);
}

} // namespace

#else // !GROVE_HAVE_CUDNN

struct ConvService::Impl {};

std::unique_ptr<ConvService> ConvService::create(CudaContext &,
                                                 std::string &why) {
  why = "this runtime was built without cuDNN (compile the model with "
        "grovec --conv-library=false)";
  return nullptr;
}

#endif // GROVE_HAVE_CUDNN

ConvService::ConvService(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ConvService::~ConvService() = default;

namespace {

/// Checks the views: the group/channel split of x and y merges into one
/// strided channel axis, the weights are packed (cuDNN filters have no
/// strides), the sizes agree and fit cuDNN's int. Empty when they do.
std::string checkViews(const View5 &x, const View5 &w, const View5 &y,
                       const int64_t pad[2], const int64_t stride[2],
                       const int64_t dilation[2]) {
  for (const View5 *v : {&x, &w, &y})
    for (int d = 0; d < 5; ++d)
      if (v->size[d] < 0 || v->size[d] > INT_MAX || v->stride[d] < 0 ||
          v->stride[d] > INT_MAX)
        return "a size or stride is negative or exceeds INT_MAX";
  const int64_t g = w.size[0];
  if (x.size[1] != g || y.size[1] != g || x.size[2] != w.size[2] ||
      y.size[2] != w.size[1] || x.size[0] != y.size[0])
    return "input, weight and result shapes disagree";
  for (int i = 0; i < 2; ++i)
    if (pad[i] < 0 || stride[i] < 1 || dilation[i] < 1 || pad[i] > INT_MAX ||
        stride[i] > INT_MAX || dilation[i] > INT_MAX)
      return "padding, strides and dilations must be >= 0, >= 1 and >= 1";
  for (int i = 0; i < 2; ++i) {
    int64_t window = dilation[i] * (w.size[3 + i] - 1) + 1;
    int64_t out = (x.size[3 + i] + 2 * pad[i] - window) / stride[i] + 1;
    if (x.size[3 + i] + 2 * pad[i] < window || out != y.size[3 + i])
      return "the result's spatial sizes do not match the input's";
  }
  if (g > 1 && (x.stride[1] != x.size[2] * x.stride[2] ||
                y.stride[1] != y.size[2] * y.stride[2]))
    return "the group and channel dimensions are not one strided axis";
  int64_t packed = 1;
  for (int d = 4; d >= 0; --d) {
    if (w.size[d] != 1 && w.stride[d] != packed)
      return "the weights are not packed";
    packed *= w.size[d];
  }
  return {};
}

void conv2d(ConvType type, size_t elemBytes, const View5 &x, const View5 &w,
            const View5 &y, const int64_t pad[2], const int64_t stride[2],
            const int64_t dilation[2]) {
  CudaContext *ctx = currentCall();
  if (!ctx) {
    reportServiceError("grove_rt_cuda_conv2d: called outside grove_invoke");
    return;
  }
  if (currentCallFailed())
    return;
  if (std::string bad = checkViews(x, w, y, pad, stride, dilation);
      !bad.empty()) {
    failCurrentCall(GROVE_ERROR_UNSUPPORTED, "grove_rt_cuda_conv2d: " + bad);
    return;
  }
  for (int d = 0; d < 5; ++d)
    if (y.size[d] == 0)
      return; // nothing to write
  std::string why;
  ConvService *service = ctx->convolutions(why);
  if (!service) {
    failCurrentCall(GROVE_ERROR_UNSUPPORTED, "grove_rt_cuda_conv2d: " + why);
    return;
  }
#if GROVE_HAVE_CUDNN
  ConvService::Impl &impl = service->impl();
  PlanKey key{};
  size_t k = 0;
  key[k++] = int64_t(type);
  for (const View5 *v : {&x, &w, &y})
    for (int d = 0; d < 5; ++d) {
      key[k++] = v->size[d];
      key[k++] = v->stride[d];
    }
  for (int i = 0; i < 2; ++i) {
    key[k++] = pad[i];
    key[k++] = stride[i];
    key[k++] = dilation[i];
  }
  std::unique_ptr<Plan> &plan = impl.plans[key];
  if (!plan) {
    plan = makePlan(impl.handle, type, x, w, y, pad, stride, dilation, why);
    if (!plan) {
      impl.plans.erase(key);
      failCurrentCall(GROVE_ERROR_UNSUPPORTED, "grove_rt_cuda_conv2d: " + why);
      return;
    }
    logPlan(*plan, type, x, w, y, pad, stride);
  }
  void *workspace = nullptr;
  if (plan->workspace) {
    workspace = ctx->allocate(plan->workspace);
    if (!workspace) {
      failCurrentCall(GROVE_ERROR_OUT_OF_MEMORY,
                      "grove_rt_cuda_conv2d: cannot allocate a " +
                          std::to_string(plan->workspace) +
                          "-byte cuDNN workspace");
      return;
    }
  }
  const float alpha = 1.0f, beta = 0.0f;
  GpuSpan span = ctx->span("gpu.library", "cudnn conv2d");
  cudnnStatus_t s = cudnn().cudnnConvolutionForward(
      impl.handle, &alpha, plan->x, x.data(elemBytes), plan->w,
      w.data(elemBytes), plan->conv, plan->algo, workspace, plan->workspace,
      &beta, plan->y, y.data(elemBytes));
  // Stream-ordered: later work on this stream may reuse the block.
  if (workspace)
    ctx->release(workspace);
  if (s != CUDNN_STATUS_SUCCESS)
    failCurrentCall(GROVE_ERROR_INTERNAL,
                    "cuDNN convolution failed: " + cudnnText(s));
#else
  (void)elemBytes;
#endif
}

} // namespace

#define GROVE_CUDA_CONV(SUFFIX, MEMREF, CTYPE, TYPE)                           \
  extern "C" GROVE_API void _mlir_ciface_grove_rt_cuda_conv2d_##SUFFIX(        \
      const MEMREF *x, const MEMREF *w, MEMREF *y, int64_t pad_h,              \
      int64_t pad_w, int64_t stride_h, int64_t stride_w, int64_t dilation_h,   \
      int64_t dilation_w) {                                                    \
    const int64_t pad[2] = {pad_h, pad_w};                                     \
    const int64_t stride[2] = {stride_h, stride_w};                            \
    const int64_t dilation[2] = {dilation_h, dilation_w};                      \
    conv2d(TYPE, sizeof(CTYPE), viewOf<5>(x), viewOf<5>(w), viewOf<5>(y), pad, \
           stride, dilation);                                                  \
  }

GROVE_CUDA_CONV(f32, grove_memref_f32_5, float, ConvType::F32)
GROVE_CUDA_CONV(f16, grove_memref_u16_5, uint16_t, ConvType::F16)
GROVE_CUDA_CONV(bf16, grove_memref_u16_5, uint16_t, ConvType::BF16)

//===- CudaRuntimeTest.cpp - libgrove_rt_cuda through its C API -----------===//
//
// Context creation for CUDA models where no GPU can be used must fail with
// GROVE_ERROR_NO_DEVICE and a message that says why (no driver, a stub,
// not a driver at all) - tested here on every machine with the toolkit.
// The tests that need a GPU (device placement of weights, device checks on
// inputs) report SKIPPED with the reason where there is none.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "grove/abi.h"
#include "grove/runtime.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

void noop(void **) {}
const grove_packed_fn kEntries[1] = {noop};

const char *kCudaDescriptor =
    "{\"format\":\"grove-model\",\"version\":7,\"module\":\"cudamodel\","
    "\"target\":\"cuda\",\n"
    "\"state\":[{\"name\":\"w\",\"dtype\":\"f32\",\"shape\":[4]}],\n"
    "\"entries\":[{\"name\":\"add\",\"args\":[{\"input\":0}],\"inputs\":[{"
    "\"name\":\"x\",\"dtype\":\"f32\",\"shape\":[-1,4]}],\"outputs\":[{"
    "\"name\":\"out0\",\"dtype\":\"f32\",\"shape\":[-1,4]}]}]}\n";
const grove_model_def kCudaModel = {GROVE_ABI_VERSION, 1, "cudamodel",
                                    kCudaDescriptor, kEntries};

/// Sets GROVE_CUDA_DRIVER for one test.
struct DriverOverride {
  explicit DriverOverride(const char *path) {
    if (path)
      setenv("GROVE_CUDA_DRIVER", path, 1);
    else
      unsetenv("GROVE_CUDA_DRIVER");
  }
  ~DriverOverride() { unsetenv("GROVE_CUDA_DRIVER"); }
};

grove_status create(grove_context **ctx,
                    const grove_context_options *o = nullptr) {
  *ctx = reinterpret_cast<grove_context *>(0x1);
  return grove_context_create_with_options(&kCudaModel, o, ctx);
}

// The GPU tests come first: once a test has loaded the toolkit's stub (whose
// soname is libcuda.so.1), dlopen("libcuda.so.1") in this process would
// return the stub instead of the real driver.
/// A context for kCudaModel on the real driver, or a skip saying why not.
class CudaRuntimeGpu : public ::testing::Test {
protected:
  void SetUp() override {
    if (create(&ctx) != GROVE_OK) {
      ctx = nullptr;
      GTEST_SKIP() << "no usable CUDA GPU here: " << grove_last_error();
    }
  }
  void TearDown() override { grove_context_destroy(ctx); }
  grove_context *ctx = nullptr;
};

TEST_F(CudaRuntimeGpu, ReportsItsDevice) {
  DLDevice dev = grove_context_device(ctx);
  EXPECT_EQ(dev.device_type, kDLCUDA);
  EXPECT_EQ(dev.device_id, 0);
}

TEST_F(CudaRuntimeGpu, RejectsHostTensors) {
  grove::test::F32Tensor w({4}, {1, 2, 3, 4}, grove::test::f32());
  ASSERT_EQ(grove_context_set_weight(ctx, "w", w.get()), GROVE_OK);
  std::vector<float> x(8, 1.0f);
  int64_t shape[2] = {2, 4};
  DLTensor t{x.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 0};
  const DLTensor *in[1] = {&t};
  DLManagedTensor *out[1];
  EXPECT_EQ(grove_invoke(ctx, "add", in, 1, out, 1),
            GROVE_ERROR_INVALID_ARGUMENT);
  std::string m = grove_last_error();
  EXPECT_NE(m.find("tensor is on kDLCPU:0, but this model runs on kDLCUDA:0"),
            std::string::npos)
      << m;
  EXPECT_EQ(out[0], nullptr);
}

TEST_F(CudaRuntimeGpu, WeightsLiveOnTheDevice) {
  std::vector<float> w = {1.5f, -2.0f, 3.25f, 8.0f};
  grove::test::F32Tensor wt({4}, w, grove::test::f32());
  ASSERT_EQ(grove_context_set_weight(ctx, "w", wt.get()), GROVE_OK);
  DLTensor view;
  ASSERT_EQ(grove_context_get_weight(ctx, "w", &view), GROVE_OK);
  EXPECT_EQ(view.device.device_type, kDLCUDA);
  std::vector<float> back(4);
  ASSERT_EQ(cudaMemcpy(back.data(), view.data, 16, cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(back, w);

  // Written through the device view, saved, read back by a host parse.
  std::vector<float> w2 = {9, 8, 7, 6};
  ASSERT_EQ(cudaMemcpy(view.data, w2.data(), 16, cudaMemcpyHostToDevice),
            cudaSuccess);
  std::string path = ::testing::TempDir() + "cuda_weights.safetensors";
  ASSERT_EQ(grove_context_save_weights(ctx, path.c_str()), GROVE_OK)
      << grove_last_error();
  grove_context *again = nullptr;
  ASSERT_EQ(create(&again), GROVE_OK);
  ASSERT_EQ(grove_context_load_weights(again, path.c_str()), GROVE_OK);
  DLTensor view2;
  ASSERT_EQ(grove_context_get_weight(again, "w", &view2), GROVE_OK);
  ASSERT_EQ(cudaMemcpy(back.data(), view2.data, 16, cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(back, w2);
  grove_context_destroy(again);
}

TEST_F(CudaRuntimeGpu, MissingDeviceOrdinalIsNoDevice) {
  grove_context_options o;
  grove_context_options_init(&o);
  o.device_id = 4096;
  grove_context *other;
  EXPECT_EQ(create(&other, &o), GROVE_ERROR_NO_DEVICE);
  EXPECT_NE(std::string(grove_last_error()).find("does not exist"),
            std::string::npos);
}

// Entry points that record how many calls are inside generated code at once.
std::atomic<int> inside{0}, mostInside{0};
void track(void **) {
  int now = ++inside;
  for (int seen = mostInside;
       now > seen && !mostInside.compare_exchange_weak(seen, now);) {
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  --inside;
}
// Waits (up to 5 s) for a second call to arrive while this one is inside.
void meet(void **) {
  ++inside;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (inside < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  int seen = inside; // stays 2 once reached: nobody leaves before
  mostInside = std::max(int(mostInside), seen);
}
const grove_packed_fn kTrack[1] = {track}, kMeet[1] = {meet};
const char *kEntryOnly = "{\"format\":\"grove-model\",\"version\":7,\"module\":"
                         "\"conc\",\"target\":\"cuda\",\n"
                         "\"state\":[],\n"
                         "\"entries\":[{\"name\":\"f\",\"args\":[],\"inputs\":["
                         "],\"outputs\":[]}]}\n";

TEST_F(CudaRuntimeGpu, CallsOnOneContextRunOneAtATime) {
  // They share the context's stream and its cuBLAS and cuDNN handles.
  grove_model_def model = {GROVE_ABI_VERSION, 1, "conc", kEntryOnly, kTrack};
  grove_context *one = nullptr;
  ASSERT_EQ(grove_context_create(&model, &one), GROVE_OK) << grove_last_error();
  inside = mostInside = 0;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i)
        if (grove_invoke(one, "f", nullptr, 0, nullptr, 0) != GROVE_OK)
          ++failures;
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(mostInside, 1);
  grove_context_destroy(one);
}

TEST_F(CudaRuntimeGpu, TwoContextsRunSideBySide) {
  grove_model_def model = {GROVE_ABI_VERSION, 1, "conc", kEntryOnly, kMeet};
  grove_context *a = nullptr, *b = nullptr;
  ASSERT_EQ(grove_context_create(&model, &a), GROVE_OK) << grove_last_error();
  ASSERT_EQ(grove_context_create(&model, &b), GROVE_OK) << grove_last_error();
  inside = mostInside = 0;
  grove_status sa = GROVE_OK, sb = GROVE_OK;
  std::thread ta([&] { sa = grove_invoke(a, "f", nullptr, 0, nullptr, 0); });
  std::thread tb([&] { sb = grove_invoke(b, "f", nullptr, 0, nullptr, 0); });
  ta.join();
  tb.join();
  EXPECT_EQ(sa, GROVE_OK);
  EXPECT_EQ(sb, GROVE_OK);
  EXPECT_EQ(mostInside, 2) << "the second context's call waited for the first";
  grove_context_destroy(a);
  grove_context_destroy(b);
}

// The split collectives' device services in a world of one (a context
// without a communicator), called as generated code calls them.
extern "C" {
int64_t _mlir_ciface_grove_rt_cuda_all_reduce_start_f32(
    const grove_memref_f32_1 *buffer, int32_t reduction);
int64_t _mlir_ciface_grove_rt_cuda_all_gather_start_f32(
    const grove_memref_f32_1 *buffer);
void _mlir_ciface_grove_rt_cuda_collective_wait_f32(int64_t handle,
                                                    grove_memref_f32_1 *out);
}
float *splitIn = nullptr, *splitReduced = nullptr, *splitGathered = nullptr;
int64_t splitHandles[3];
cudaError_t splitMemset = cudaSuccess;
grove_memref_f32_1 deviceView(float *data, int64_t n) {
  return {data, data, 0, {n}, {1}};
}
// Starts two collectives and one it never waits for, and overwrites the
// input before the waits: the starts copied it.
void splitCollectives(void **) {
  grove_memref_f32_1 in = deviceView(splitIn, 4);
  grove_memref_f32_1 reduced = deviceView(splitReduced, 4);
  grove_memref_f32_1 gathered = deviceView(splitGathered, 4);
  splitHandles[0] = _mlir_ciface_grove_rt_cuda_all_reduce_start_f32(&in, 1);
  splitHandles[1] = _mlir_ciface_grove_rt_cuda_all_gather_start_f32(&in);
  splitHandles[2] = _mlir_ciface_grove_rt_cuda_all_reduce_start_f32(&in, 0);
  // On the legacy default stream: after the copies queued on the context's
  // (blocking) stream.
  splitMemset = cudaMemset(splitIn, 0, 4 * sizeof(float));
  _mlir_ciface_grove_rt_cuda_collective_wait_f32(splitHandles[1], &gathered);
  _mlir_ciface_grove_rt_cuda_collective_wait_f32(splitHandles[0], &reduced);
}
const grove_packed_fn kSplit[1] = {splitCollectives};

TEST_F(CudaRuntimeGpu, SplitCollectivesInAWorldOfOne) {
  grove_model_def model = {GROVE_ABI_VERSION, 1, "split", kEntryOnly, kSplit};
  grove_context *one = nullptr;
  ASSERT_EQ(grove_context_create(&model, &one), GROVE_OK) << grove_last_error();
  const std::vector<float> x = {1.5f, -2.0f, 3.25f, 0.0f};
  ASSERT_EQ(cudaMalloc(&splitIn, 16), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&splitReduced, 16), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&splitGathered, 16), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(splitIn, x.data(), 16, cudaMemcpyHostToDevice),
            cudaSuccess);
  // The third start is left for the end of the call to wait for.
  EXPECT_EQ(grove_invoke(one, "f", nullptr, 0, nullptr, 0), GROVE_OK)
      << grove_last_error();
  ASSERT_EQ(splitMemset, cudaSuccess);
  for (int64_t handle : splitHandles)
    EXPECT_NE(handle, 0);
  std::vector<float> reduced(4), gathered(4);
  ASSERT_EQ(
      cudaMemcpy(reduced.data(), splitReduced, 16, cudaMemcpyDeviceToHost),
      cudaSuccess);
  ASSERT_EQ(
      cudaMemcpy(gathered.data(), splitGathered, 16, cudaMemcpyDeviceToHost),
      cudaSuccess);
  EXPECT_EQ(reduced, x) << "the mean over one rank is its input";
  EXPECT_EQ(gathered, x) << "the gather of one rank is its input";
  // The context is usable again: nothing of the call stayed in flight.
  EXPECT_EQ(grove_invoke(one, "f", nullptr, 0, nullptr, 0), GROVE_OK)
      << grove_last_error();
  for (float *p : {splitIn, splitReduced, splitGathered})
    cudaFree(p);
  grove_context_destroy(one);
}

TEST(CudaRuntimeNoGpu, MissingDriverIsNoDevice) {
  DriverOverride d("/nonexistent/libcuda.so.1");
  grove_context *ctx;
  EXPECT_EQ(create(&ctx), GROVE_ERROR_NO_DEVICE);
  EXPECT_EQ(ctx, nullptr);
  std::string m = grove_last_error();
  EXPECT_NE(m.find("model 'cudamodel'"), std::string::npos) << m;
  EXPECT_NE(m.find("no CUDA driver: cannot load '/nonexistent/libcuda.so.1'"),
            std::string::npos)
      << m;
}

TEST(CudaRuntimeNoGpu, ToolkitStubIsNoDevice) {
  // scripts/gpu-check.sh carries the stub where no toolkit is installed.
  const char *carried = std::getenv("GROVE_TEST_CUDA_STUB");
  std::string stub = carried && *carried ? carried
                                         : GROVE_TEST_CUDA_TOOLKIT
                         "/lib64/stubs/libcuda.so";
  DriverOverride d(stub.c_str());
  grove_context *ctx;
  EXPECT_EQ(create(&ctx), GROVE_ERROR_NO_DEVICE);
  EXPECT_EQ(ctx, nullptr);
  std::string m = grove_last_error();
  EXPECT_NE(m.find("stub library, not a driver"), std::string::npos) << m;
}

TEST(CudaRuntimeNoGpu, OtherLibraryIsNoDevice) {
  DriverOverride d("libm.so.6");
  grove_context *ctx;
  EXPECT_EQ(create(&ctx), GROVE_ERROR_NO_DEVICE);
  std::string m = grove_last_error();
  EXPECT_NE(m.find("lacks cuInit"), std::string::npos) << m;
}

TEST(CudaRuntimeNoGpu, OptionsMustBeInitialised) {
  grove_context_options o{};
  grove_context *ctx;
  EXPECT_EQ(create(&ctx, &o), GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(grove_last_error()).find("grove_context_options_init"),
            std::string::npos);
  grove_context_options_init(&o);
  EXPECT_EQ(o.struct_size, sizeof(grove_context_options));
  EXPECT_EQ(o.device_id, 0);
  EXPECT_EQ(o.stream, nullptr);
  EXPECT_EQ(o.flags, 0u);
  // Flags are checked before any device is looked for.
  o.flags = GROVE_CONTEXT_ASYNC | 4u;
  EXPECT_EQ(create(&ctx, &o), GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(grove_last_error())
                .find("unknown grove_context_options flags 4"),
            std::string::npos)
      << grove_last_error();
  grove_context_options_init(nullptr); // no crash
}

TEST(CudaRuntimeNoGpu, HostModelsStillRunOnTheHost) {
  const char *desc = "{\"format\":\"grove-model\",\"version\":7,\"module\":"
                     "\"hostm\",\"target\":\"host\",\n"
                     "\"state\":[],\n"
                     "\"entries\":[{\"name\":\"f\",\"args\":[],\"inputs\":[],"
                     "\"outputs\":[]}]}\n";
  grove_model_def host = {GROVE_ABI_VERSION, 1, "hostm", desc, kEntries};
  grove_context *ctx = nullptr;
  ASSERT_EQ(grove_context_create(&host, &ctx), GROVE_OK);
  DLDevice dev = grove_context_device(ctx);
  EXPECT_EQ(dev.device_type, kDLCPU);
  EXPECT_EQ(grove_invoke(ctx, "f", nullptr, 0, nullptr, 0), GROVE_OK);
  grove_context_destroy(ctx);
  EXPECT_EQ(grove_context_device(nullptr).device_type, kDLCPU);
}

} // namespace

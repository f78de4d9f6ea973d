//===- WeightsTest.cpp - set/get/save of individual weights ---------------===//

#include "TestModels.h"
#include "TestUtil.h"

#include <cstring>
#include <sys/stat.h>

using namespace grove::test;

namespace {

class TwoWeights : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_GROVE_OK(grove_context_create(&two_model, &ctx));
  }
  void TearDown() override { grove_context_destroy(ctx); }

  void setBoth(const std::vector<float> &a, const std::vector<int32_t> &b) {
    F32Tensor ta({2, 2}, a, f32());
    HostTensor<int32_t> tb({3}, b, i32());
    ASSERT_GROVE_OK(grove_context_set_weight(ctx, "a", ta.get()));
    ASSERT_GROVE_OK(grove_context_set_weight(ctx, "b", tb.get()));
  }

  std::vector<float> getA(grove_context *c) {
    DLTensor view;
    EXPECT_EQ(grove_context_get_weight(c, "a", &view), GROVE_OK);
    auto *p = static_cast<float *>(view.data);
    return std::vector<float>(p, p + 4);
  }

  grove_context *ctx = nullptr;
  TempDir dir;
};

TEST_F(TwoWeights, SetThenGetView) {
  F32Tensor a({2, 2}, {1, 2, 3, 4}, f32());
  ASSERT_GROVE_OK(grove_context_set_weight(ctx, "a", a.get()));
  EXPECT_EQ(grove_context_weights_ready(ctx), 0); // b still missing
  DLTensor view;
  ASSERT_GROVE_OK(grove_context_get_weight(ctx, "a", &view));
  EXPECT_EQ(view.device.device_type, kDLCPU);
  EXPECT_EQ(view.ndim, 2);
  EXPECT_EQ(view.shape[0], 2);
  EXPECT_EQ(view.shape[1], 2);
  EXPECT_EQ(view.strides[0], 2);
  EXPECT_EQ(view.strides[1], 1);
  EXPECT_EQ(view.byte_offset, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(view.data) % 64, 0u);
  EXPECT_NE(view.data, a.t.data); // copied in
  EXPECT_EQ(getA(ctx), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_FAILS(grove_context_get_weight(ctx, "b", &view),
               GROVE_ERROR_BAD_WEIGHTS, "'b' has not been set");

  HostTensor<int32_t> b({3}, {5, 6, 7}, i32());
  ASSERT_GROVE_OK(grove_context_set_weight(ctx, "b", b.get()));
  EXPECT_EQ(grove_context_weights_ready(ctx), 1);
}

TEST_F(TwoWeights, SetAcceptsStridedSourceAndOwnView) {
  // A transposed view of [[1, 2], [3, 4]] is [[1, 3], [2, 4]].
  F32Tensor a({2, 2}, {1, 2, 3, 4}, f32());
  int64_t strides[] = {1, 2};
  a.t.strides = strides;
  ASSERT_GROVE_OK(grove_context_set_weight(ctx, "a", a.get()));
  EXPECT_EQ(getA(ctx), (std::vector<float>{1, 3, 2, 4}));
  // Setting a weight from its own view is a no-op, not corruption.
  DLTensor view;
  ASSERT_GROVE_OK(grove_context_get_weight(ctx, "a", &view));
  ASSERT_GROVE_OK(grove_context_set_weight(ctx, "a", &view));
  EXPECT_EQ(getA(ctx), (std::vector<float>{1, 3, 2, 4}));
}

TEST_F(TwoWeights, SetRejectsBadTensors) {
  F32Tensor a({2, 2}, {1, 2, 3, 4}, f32());
  EXPECT_FAILS(grove_context_set_weight(ctx, "zz", a.get()),
               GROVE_ERROR_INVALID_ARGUMENT, "no param 'zz'");
  EXPECT_FAILS(grove_context_set_weight(ctx, nullptr, a.get()),
               GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_FAILS(grove_context_set_weight(nullptr, "a", a.get()),
               GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_FAILS(grove_context_set_weight(ctx, "a", nullptr),
               GROVE_ERROR_INVALID_ARGUMENT, "NULL");
  EXPECT_FAILS(grove_context_set_weight(ctx, "b", a.get()),
               GROVE_ERROR_BAD_WEIGHTS, "expected i32 [3], got f32 [2, 2]");
  F32Tensor wrongShape({4}, {1, 2, 3, 4}, f32());
  EXPECT_FAILS(grove_context_set_weight(ctx, "a", wrongShape.get()),
               GROVE_ERROR_BAD_WEIGHTS, "expected f32 [2, 2], got f32 [4]");
  F32Tensor cuda({2, 2}, {1, 2, 3, 4}, f32());
  cuda.t.device.device_type = kDLCUDA;
  EXPECT_FAILS(grove_context_set_weight(ctx, "a", cuda.get()),
               GROVE_ERROR_INVALID_ARGUMENT, "kDLCPU");
  F32Tensor noData({2, 2}, {1, 2, 3, 4}, f32());
  noData.t.data = nullptr;
  EXPECT_FAILS(grove_context_set_weight(ctx, "a", noData.get()),
               GROVE_ERROR_INVALID_ARGUMENT, "data is NULL");
  // Strides whose reach overflows 64 bits, or wraps around the address
  // space, were followed: wrong bytes copied, or a crash.
  for (std::vector<int64_t> strides :
       {std::vector<int64_t>{int64_t(1) << 62, 1},
        std::vector<int64_t>{INT64_MAX, INT64_MAX},
        std::vector<int64_t>{-INT64_MAX, 1},
        std::vector<int64_t>{1, int64_t(1) << 61}}) {
    F32Tensor wild({2, 2}, {1, 2, 3, 4}, f32());
    wild.t.strides = strides.data();
    EXPECT_FAILS(grove_context_set_weight(ctx, "a", wild.get()),
                 GROVE_ERROR_INVALID_ARGUMENT, "reach past the address space");
  }
  F32Tensor offset({2, 2}, {1, 2, 3, 4}, f32());
  offset.t.byte_offset = UINT64_MAX - 3;
  EXPECT_FAILS(grove_context_set_weight(ctx, "a", offset.get()),
               GROVE_ERROR_INVALID_ARGUMENT, "wraps around the address space");
  EXPECT_EQ(grove_context_weights_ready(ctx), 0);
  DLTensor view;
  EXPECT_FAILS(grove_context_get_weight(ctx, "a", &view),
               GROVE_ERROR_BAD_WEIGHTS);
  EXPECT_FAILS(grove_context_get_weight(ctx, "a", nullptr),
               GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_FAILS(grove_context_get_weight(ctx, "nope", &view),
               GROVE_ERROR_INVALID_ARGUMENT, "no param 'nope'");
}

TEST_F(TwoWeights, SaveRoundTrip) {
  setBoth({1.5f, -2, 3e10f, 0}, {-7, 0, 42});
  const std::string path = dir.file("w.safetensors");
  ASSERT_GROVE_OK(grove_context_save_weights(ctx, path.c_str()));

  std::string bytes = readFile(path);
  ASSERT_GE(bytes.size(), 8u);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | static_cast<uint8_t>(bytes[i]);
  EXPECT_EQ(n % 8, 0u) << "header padded to 8 bytes";
  EXPECT_EQ(bytes.size(), 8 + n + 16 + 12);
  EXPECT_NE(bytes.find("\"grove_module\":\"two\""), std::string::npos);

  grove_context *other = nullptr;
  ASSERT_GROVE_OK(grove_context_create(&two_model, &other));
  ASSERT_GROVE_OK(grove_context_load_weights(other, path.c_str()));
  EXPECT_EQ(getA(other), (std::vector<float>{1.5f, -2, 3e10f, 0}));
  DLTensor view;
  ASSERT_GROVE_OK(grove_context_get_weight(other, "b", &view));
  auto *b = static_cast<int32_t *>(view.data);
  EXPECT_EQ(std::vector<int32_t>(b, b + 3), (std::vector<int32_t>{-7, 0, 42}));

  // Same bytes through the in-memory loader.
  ASSERT_GROVE_OK(grove_context_load_weights_from_memory(other, bytes.data(),
                                                         bytes.size()));
  EXPECT_EQ(getA(other), (std::vector<float>{1.5f, -2, 3e10f, 0}));
  grove_context_destroy(other);

  // No temporary files left behind.
  EXPECT_EQ(dir.list(), std::vector<std::string>{"w.safetensors"});
}

TEST_F(TwoWeights, SaveOverwritesExistingFileAtomically) {
  const std::string path = dir.file("w.safetensors");
  dir.write("w.safetensors", "old contents");
  setBoth({1, 2, 3, 4}, {5, 6, 7});
  ASSERT_GROVE_OK(grove_context_save_weights(ctx, path.c_str()));
  ASSERT_GROVE_OK(grove_context_load_weights(ctx, path.c_str()));
  EXPECT_EQ(getA(ctx), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(dir.list().size(), 1u);
}

TEST_F(TwoWeights, SaveFailures) {
  EXPECT_FAILS(grove_context_save_weights(ctx, dir.file("x").c_str()),
               GROVE_ERROR_BAD_WEIGHTS, "param 'a' has not been set");
  setBoth({1, 2, 3, 4}, {5, 6, 7});
  EXPECT_FAILS(
      grove_context_save_weights(ctx, dir.file("no/such/dir/x").c_str()),
      GROVE_ERROR_IO, "temporary file");
  ASSERT_EQ(mkdir(dir.file("sub").c_str(), 0755), 0);
  EXPECT_FAILS(grove_context_save_weights(ctx, dir.file("sub").c_str()),
               GROVE_ERROR_IO, "sub");
  EXPECT_EQ(dir.list(), std::vector<std::string>{"sub"}); // temp removed
  EXPECT_FAILS(grove_context_save_weights(ctx, nullptr),
               GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_FAILS(grove_context_save_weights(nullptr, "x"),
               GROVE_ERROR_INVALID_ARGUMENT);
}

TEST(Weights, ModelWithoutParamsSavesAndLoadsEmptyFile) {
  grove_model_def model = {GROVE_ABI_VERSION, 0, "empty",
                           "{\"format\":\"grove-model\",\"version\":7,"
                           "\"module\":\"empty\",\"target\":\"host\",\n"
                           "\"state\":[],\n"
                           "\"entries\":[]}\n",
                           nullptr};
  grove_context *ctx = nullptr;
  ASSERT_GROVE_OK(grove_context_create(&model, &ctx));
  TempDir dir;
  ASSERT_GROVE_OK(grove_context_save_weights(ctx, dir.file("e").c_str()));
  ASSERT_GROVE_OK(grove_context_load_weights(ctx, dir.file("e").c_str()));
  grove_context_destroy(ctx);
}

TEST(Weights, AllDTypesRoundTrip) {
  grove_model_def model = {
      GROVE_ABI_VERSION, 0, "m",
      "{\"format\":\"grove-model\",\"version\":7,\"module\":\"m\",\"target\":"
      "\"host\",\n"
      "\"state\":[{\"name\":\"a\",\"dtype\":\"f16\",\"shape\":[3]},{\"name\":"
      "\"b\",\"dtype\":\"bf16\",\"shape\":[1]},{\"name\":\"c\",\"dtype\":"
      "\"f64\",\"shape\":[2]},{\"name\":\"d\",\"dtype\":\"i8\",\"shape\":[5]},{"
      "\"name\":\"e\",\"dtype\":\"i16\",\"shape\":[1]},{\"name\":\"f\","
      "\"dtype\":\"i64\",\"shape\":[1]},{\"name\":\"g\",\"dtype\":\"i1\","
      "\"shape\":[3]},{\"name\":\"h\",\"dtype\":\"f32\",\"shape\":[]},{"
      "\"name\":\"i\",\"dtype\":\"i32\",\"shape\":[0,7]}],\n"
      "\"entries\":[]}\n",
      nullptr};
  grove_context *ctx = nullptr;
  ASSERT_GROVE_OK(grove_context_create(&model, &ctx));
  // Fill every param with a recognisable byte pattern through its view: first
  // zeros via set_weight (to mark it set), then bytes via the view.
  for (uint32_t i = 0; i < grove_context_num_params(ctx); ++i) {
    const grove_tensor_sig *sig = nullptr;
    ASSERT_GROVE_OK(grove_context_param(ctx, i, &sig));
    size_t count = 1;
    for (int d = 0; d < sig->ndim; ++d)
      count *= static_cast<size_t>(sig->shape[d]);
    std::vector<uint8_t> bytes(count * sig->dtype.bits / 8 + 1);
    for (size_t k = 0; k < bytes.size(); ++k)
      bytes[k] = static_cast<uint8_t>(i * 16 + k);
    DLTensor t{};
    t.data = bytes.data();
    t.device = {kDLCPU, 0};
    t.ndim = sig->ndim;
    t.dtype = sig->dtype;
    t.shape = const_cast<int64_t *>(sig->shape);
    ASSERT_GROVE_OK(grove_context_set_weight(ctx, sig->name, &t));
  }
  TempDir dir;
  ASSERT_GROVE_OK(grove_context_save_weights(ctx, dir.file("w").c_str()));
  grove_context *again = nullptr;
  ASSERT_GROVE_OK(grove_context_create(&model, &again));
  ASSERT_GROVE_OK(grove_context_load_weights(again, dir.file("w").c_str()));
  for (uint32_t i = 0; i < grove_context_num_params(ctx); ++i) {
    const grove_tensor_sig *sig = nullptr;
    ASSERT_GROVE_OK(grove_context_param(ctx, i, &sig));
    DLTensor x, y;
    ASSERT_GROVE_OK(grove_context_get_weight(ctx, sig->name, &x));
    ASSERT_GROVE_OK(grove_context_get_weight(again, sig->name, &y));
    size_t count = 1;
    for (int d = 0; d < sig->ndim; ++d)
      count *= static_cast<size_t>(sig->shape[d]);
    EXPECT_EQ(std::memcmp(x.data, y.data, count * sig->dtype.bits / 8), 0)
        << sig->name;
  }
  std::string bytes = readFile(dir.file("w"));
  for (const char *dtype :
       {"\"F16\"", "\"BF16\"", "\"F64\"", "\"I8\"", "\"I16\"", "\"I64\"",
        "\"BOOL\"", "\"F32\"", "\"I32\""})
    EXPECT_NE(bytes.find(dtype), std::string::npos) << dtype;
  grove_context_destroy(again);
  grove_context_destroy(ctx);
}

} // namespace

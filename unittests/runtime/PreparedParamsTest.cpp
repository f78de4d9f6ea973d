//===- PreparedParamsTest.cpp - Copies of params kept across calls --------===//
//
// PreparedParams (runtime/src/host/PreparedParams.h) through a hand-written
// model whose entries act as the convolution service does: a reader asks
// for a prepared copy of its weight (twice its values); a writer changes
// the weight in place. A copy is made on the second call at a version and
// reused after; every way the weight can change (a writing entry,
// set_weight, a load) makes a new version, and a writable view
// (get_weight) stops copies until a load gives the param new storage.
//
//===----------------------------------------------------------------------===//

#include "TestModels.h"
#include "TestUtil.h"

#include "Context.h"
#include "CurrentCall.h"
#include "PreparedParams.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

using namespace grove::test;
using grove::rt::findStableParam;
using grove::rt::PreparedCopy;
using grove::rt::StableParam;

namespace {

/// What the last call of `use` saw.
struct Seen {
  bool stable = false;
  bool copied = false;
  float copy[4] = {};
  int prepared = 0; // copies made so far
  bool partStable = false;
  bool writerStable = false;
} seen;

/// The form `use` asks for.
int64_t form = 7;

/// use(w: read): asks for w doubled, as a service would.
void use(void **args) {
  auto *w = static_cast<Memref<1> *>(args[0]);
  auto *data = static_cast<const float *>(w->aligned);
  std::optional<StableParam> stable = findStableParam(data, 16);
  seen.stable = stable.has_value();
  seen.copied = false;
  seen.partStable = findStableParam(data, 8).has_value();
  if (!stable)
    return;
  PreparedCopy copy = stable->store->get(*stable, {form}, 16, [&](void *out) {
    auto *doubled = static_cast<float *>(out);
    for (int i = 0; i < 4; ++i)
      doubled[i] = 2 * data[i];
    ++seen.prepared;
    return true;
  });
  if (copy) {
    seen.copied = true;
    std::memcpy(seen.copy, copy->get(), 16);
  }
}

/// write(w: write): w += 1, and checks that it is not stable for itself.
void write(void **args) {
  auto *w = static_cast<float *>(static_cast<Memref<1> *>(args[0])->aligned);
  seen.writerStable = findStableParam(w, 16).has_value();
  for (int i = 0; i < 4; ++i)
    w[i] += 1;
}

const grove_packed_fn kEntries[] = {use, write};
const char kDescriptor[] =
    "{\"format\":\"grove-model\",\"version\":7,\"module\":\"prep\","
    "\"target\":\"host\",\n"
    "\"state\":[{\"name\":\"w\",\"dtype\":\"f32\",\"shape\":[4],\"init\":"
    "\"0x3f800000\"}],\n"
    "\"entries\":[{\"name\":\"use\",\"args\":[{\"state\":\"w\",\"access\":"
    "\"read\"}],\"inputs\":[],\"outputs\":[]},\n"
    "{\"name\":\"write\",\"args\":[{\"state\":\"w\",\"access\":\"write\"}],"
    "\"inputs\":[],\"outputs\":[]}]}\n";
const grove_model_def kModel = {GROVE_ABI_VERSION, 2, "prep", kDescriptor,
                                kEntries};

class PreparedParams : public ::testing::Test {
protected:
  void SetUp() override {
    seen = Seen();
    form = 7;
    ASSERT_GROVE_OK(grove_context_create(&kModel, &ctx));
  }
  void TearDown() override { grove_context_destroy(ctx); }
  void use() {
    ASSERT_GROVE_OK(grove_invoke(ctx, "use", nullptr, 0, nullptr, 0));
  }
  void write() {
    ASSERT_GROVE_OK(grove_invoke(ctx, "write", nullptr, 0, nullptr, 0));
  }
  /// Two calls of `use`: the first makes nothing, the second the copy.
  void useTwice(float expected) {
    use();
    EXPECT_TRUE(seen.stable);
    EXPECT_FALSE(seen.copied) << "a copy made on the first call at a version";
    use();
    ASSERT_TRUE(seen.copied);
    for (float v : seen.copy)
      EXPECT_EQ(v, 2 * expected);
  }
  grove_context *ctx = nullptr;
};

TEST_F(PreparedParams, MadeOnTheSecondCallThenReused) {
  useTwice(1.0f);
  EXPECT_EQ(seen.prepared, 1);
  use();
  use();
  EXPECT_TRUE(seen.copied);
  EXPECT_EQ(seen.prepared, 1) << "the copy was made again";
  EXPECT_EQ(ctx->prepared.size(), 1u);
}

TEST_F(PreparedParams, OneCopyAParamInTheFormAskedForLast) {
  useTwice(1.0f);
  form = 8;
  use();
  EXPECT_FALSE(seen.copied) << "another form's copy handed out";
  EXPECT_EQ(ctx->prepared.size(), 1u);
  use();
  EXPECT_TRUE(seen.copied);
  EXPECT_EQ(seen.prepared, 2);
  EXPECT_EQ(ctx->prepared.size(), 1u) << "two copies of one param";
  // Alternating forms: each is asked for once in a row, none is made.
  for (int i = 0; i < 4; ++i) {
    form = i % 2 ? 8 : 7;
    use();
  }
  EXPECT_EQ(seen.prepared, 2);
}

TEST_F(PreparedParams, OnlyWholeParamsOfReadersInsideCalls) {
  use();
  EXPECT_FALSE(seen.partStable) << "half a param counted as the param";
  write();
  EXPECT_FALSE(seen.writerStable) << "stable for the entry that writes it";
  auto *w = reinterpret_cast<const float *>(ctx->paramData(0));
  EXPECT_FALSE(findStableParam(w, 16).has_value()) << "outside any call";
}

TEST_F(PreparedParams, AWritingEntryMakesANewVersion) {
  useTwice(1.0f);
  write();
  EXPECT_EQ(ctx->prepared.size(), 0u) << "the stale copy was kept";
  useTwice(2.0f);
  EXPECT_EQ(seen.prepared, 2);
}

TEST_F(PreparedParams, SetWeightMakesANewVersion) {
  useTwice(1.0f);
  F32Tensor value({4}, {5, 5, 5, 5}, f32());
  ASSERT_GROVE_OK(grove_context_set_weight(ctx, "w", value.get()));
  useTwice(5.0f);
}

TEST_F(PreparedParams, AViewStopsCopiesUntilALoad) {
  useTwice(1.0f);
  DLTensor view;
  ASSERT_GROVE_OK(grove_context_get_weight(ctx, "w", &view));
  EXPECT_EQ(ctx->prepared.size(), 0u);
  static_cast<float *>(view.data)[0] = 3.0f; // unseen by the runtime
  for (int i = 0; i < 3; ++i) {
    use();
    EXPECT_FALSE(seen.stable) << "call " << i << " after the view";
  }
  // A load gives the param new storage: the view is gone, copies resume.
  TempDir dir;
  std::string path = dir.path() + "/w.safetensors";
  F32Tensor value({4}, {4, 4, 4, 4}, f32());
  ASSERT_GROVE_OK(grove_context_set_weight(ctx, "w", value.get()));
  ASSERT_GROVE_OK(grove_context_save_weights(ctx, path.c_str()));
  ASSERT_GROVE_OK(grove_context_load_weights(ctx, path.c_str()));
  useTwice(4.0f);
}

} // namespace

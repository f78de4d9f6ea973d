//===- StateTest.cpp - Module state: kinds, access, locking, saving -------===//
//
// A hand-written stand-in for a model with initialised state, in the shape
// grovec emits (docs/abi.md, "State"): readers of the state run
// concurrently, writers alone; an abandoned writer leaves state and lock as
// they were; saves refuse destinations that are not regular files.
//
//===----------------------------------------------------------------------===//

#include "TestModels.h"
#include "TestUtil.h"

#include "Context.h"
#include "Services.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace grove::test;

namespace {

std::atomic<int> readersIn{0}, writersIn{0}, maxReaders{0};
std::atomic<bool> overlap{false};

void hold() { std::this_thread::sleep_for(std::chrono::milliseconds(15)); }

/// peek(acc: read) -> y = copy of acc.
void peek(void **args) {
  int now = ++readersIn;
  for (int seen = maxReaders; now > seen;)
    maxReaders.compare_exchange_weak(seen, now);
  overlap = overlap || writersIn > 0;
  hold();
  overlap = overlap || writersIn > 0;
  auto *acc = static_cast<Memref<1> *>(args[0]);
  auto *y = static_cast<Memref<1> *>(args[1]);
  auto *out = static_cast<float *>(_mlir_memref_to_llvm_alloc(16));
  std::memcpy(out, acc->aligned, 16);
  *y = {out, out, 0, {4}, {1}};
  --readersIn;
}

/// bump(acc: write, x: f32[4]): acc += x in place.
void bump(void **args) {
  overlap = overlap || ++writersIn > 1 || readersIn > 0;
  hold();
  overlap = overlap || readersIn > 0;
  auto *acc = static_cast<float *>(static_cast<Memref<1> *>(args[0])->aligned);
  auto *x =
      static_cast<const float *>(static_cast<Memref<1> *>(args[1])->aligned);
  for (int i = 0; i < 4; ++i)
    acc[i] += x[i];
  --writersIn;
}

/// bump_oom(acc: write): allocates before it writes, as generated code
/// does (writes are last), and the allocation fails.
void bumpOom(void **args) {
  void *huge = _mlir_memref_to_llvm_alloc(size_t(1) << 50);
  static_cast<float *>(static_cast<Memref<1> *>(args[0])->aligned)[0] = 99.0f;
  _mlir_memref_to_llvm_free(huge);
}

const grove_packed_fn kEntries[] = {peek, bump, bumpOom};
const char kDescriptor[] =
    "{\"format\":\"grove-model\",\"version\":7,\"module\":\"statem\","
    "\"target\":\"host\",\n"
    "\"state\":[{\"name\":\"acc\",\"dtype\":\"f32\",\"shape\":[4],\"init\":"
    "\"0x3f800000\"}],\n"
    "\"entries\":[{\"name\":\"peek\",\"args\":[{\"state\":\"acc\",\"access\":"
    "\"read\"}],\"inputs\":[],\"outputs\":[{\"name\":\"y\",\"dtype\":\"f32\","
    "\"shape\":[4]}]},\n"
    "{\"name\":\"bump\",\"args\":[{\"state\":\"acc\",\"access\":\"write\"},{"
    "\"input\":0}],\"inputs\":[{\"name\":\"x\",\"dtype\":\"f32\",\"shape\":[4]}"
    "],\"outputs\":[]},\n"
    "{\"name\":\"bump_oom\",\"args\":[{\"state\":\"acc\",\"access\":\"write\"}]"
    ",\"inputs\":[],\"outputs\":[]}]}\n";
const grove_model_def kModel = {GROVE_ABI_VERSION, 3, "statem", kDescriptor,
                                kEntries};

struct Context {
  grove_context *ctx = nullptr;
  Context() { EXPECT_EQ(grove_context_create(&kModel, &ctx), GROVE_OK); }
  ~Context() { grove_context_destroy(ctx); }
  std::vector<float> acc() {
    DLTensor view;
    EXPECT_EQ(grove_context_get_weight(ctx, "acc", &view), GROVE_OK);
    auto *p = static_cast<const float *>(view.data);
    return {p, p + 4};
  }
  grove_status peekOnce() {
    DLManagedTensor *out = nullptr;
    grove_status s = grove_invoke(ctx, "peek", nullptr, 0, &out, 1);
    if (out)
      out->deleter(out);
    return s;
  }
  grove_status bumpOnce(float by) {
    HostTensor<float> x({4}, {by, by, by, by}, f32());
    const DLTensor *in[] = {x.get()};
    return grove_invoke(ctx, "bump", in, 1, nullptr, 0);
  }
};

TEST(State, StartsAtItsInitializerWithoutWeights) {
  Context c;
  EXPECT_EQ(grove_context_weights_ready(c.ctx), 1);
  EXPECT_EQ(c.acc(), std::vector<float>(4, 1.0f));
  ASSERT_GROVE_OK(c.bumpOnce(2.0f));
  EXPECT_EQ(c.acc(), std::vector<float>(4, 3.0f));
}

TEST(State, ReadersShareTheContextWritersRunAlone) {
  Context c;
  readersIn = writersIn = maxReaders = 0;
  overlap = false;
  auto run = [&](int readers, int writers) {
    std::vector<std::thread> threads;
    for (int t = 0; t < readers + writers; ++t)
      threads.emplace_back([&, t] {
        for (int k = 0; k < 4; ++k)
          EXPECT_EQ(t < readers ? c.peekOnce() : c.bumpOnce(1.0f), GROVE_OK);
      });
    for (std::thread &t : threads)
      t.join();
  };
  run(4, 0);
  // Readers hold their calls for a while: with a shared lock some overlap.
  EXPECT_GE(maxReaders.load(), 2) << "readers never ran concurrently";
  run(3, 3);
  EXPECT_FALSE(overlap.load()) << "a writer ran beside another call";
  EXPECT_EQ(c.acc(), std::vector<float>(4, 1.0f + 3 * 4));
}

TEST(State, AbandonedWriterLeavesStateAndLock) {
  Context c;
  ASSERT_GROVE_OK(c.bumpOnce(1.0f));
  EXPECT_FAILS(grove_invoke(c.ctx, "bump_oom", nullptr, 0, nullptr, 0),
               GROVE_ERROR_OUT_OF_MEMORY, "entry 'bump_oom'");
  EXPECT_EQ(c.acc(), std::vector<float>(4, 2.0f));
  // The exclusive lock was released: readers and writers go on.
  ASSERT_GROVE_OK(c.peekOnce());
  ASSERT_GROVE_OK(c.bumpOnce(1.0f));
  EXPECT_EQ(c.acc(), std::vector<float>(4, 3.0f));
}

TEST(State, FailedCallClearsOnlyTheEntrysSlots) {
  Context c;
  auto *sentinel = reinterpret_cast<DLManagedTensor *>(0x1);
  // The caller claims three outputs; the entry has one.
  DLManagedTensor *outs[3] = {sentinel, sentinel, sentinel};
  EXPECT_FAILS(grove_invoke(c.ctx, "peek", nullptr, 0, outs, 3),
               GROVE_ERROR_INVALID_ARGUMENT, "takes 0 inputs and 1 outputs");
  EXPECT_EQ(outs[0], nullptr);
  EXPECT_EQ(outs[1], sentinel);
  EXPECT_EQ(outs[2], sentinel);
  // It claims none: nothing is written.
  DLManagedTensor *one = sentinel;
  EXPECT_FAILS(grove_invoke(c.ctx, "peek", nullptr, 0, &one, 0),
               GROVE_ERROR_INVALID_ARGUMENT, "takes 0 inputs");
  EXPECT_EQ(one, sentinel);
}

TEST(State, InputsReachingPastTheAddressSpaceAreRejected) {
  Context c;
  for (uint64_t offset : {uint64_t(1) << 48, uint64_t(1) << 63}) {
    HostTensor<float> x({4}, {1, 2, 3, 4}, f32());
    x.t.byte_offset = offset;
    const DLTensor *in[] = {x.get()};
    EXPECT_FAILS(grove_invoke(c.ctx, "bump", in, 1, nullptr, 0),
                 GROVE_ERROR_INVALID_ARGUMENT, "past the address space")
        << "byte_offset " << offset;
    // set_weight applies the same check.
    EXPECT_FAILS(grove_context_set_weight(c.ctx, "acc", x.get()),
                 GROVE_ERROR_INVALID_ARGUMENT, "past the address space");
  }
  EXPECT_EQ(c.acc(), std::vector<float>(4, 1.0f));
}

TEST(State, SaveRefusesWhatIsNotARegularFile) {
  Context c;
  char dir[] = "/tmp/grove-state-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string fifo = std::string(dir) + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FAILS(grove_context_save_weights(c.ctx, fifo.c_str()), GROVE_ERROR_IO,
               "not a regular file");
  struct stat st;
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced";
  EXPECT_FAILS(grove_context_save_weights(c.ctx, "/dev/null"), GROVE_ERROR_IO,
               "not a regular file");
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_FAILS(grove_context_save_weights(c.ctx, dir), GROVE_ERROR_IO,
               "is a directory");

  // A symbolic link to a regular file: the file is written, the link stays.
  std::string file = std::string(dir) + "/state.safetensors";
  std::string link = std::string(dir) + "/link.safetensors";
  ASSERT_GROVE_OK(grove_context_save_weights(c.ctx, file.c_str()));
  ASSERT_EQ(symlink(file.c_str(), link.c_str()), 0);
  ASSERT_GROVE_OK(c.bumpOnce(1.0f));
  ASSERT_GROVE_OK(grove_context_save_weights(c.ctx, link.c_str()));
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link was replaced";
  Context reload;
  ASSERT_GROVE_OK(grove_context_load_weights(reload.ctx, file.c_str()));
  EXPECT_EQ(reload.acc(), std::vector<float>(4, 2.0f));
  unlink(link.c_str());
  unlink(file.c_str());
  unlink(fifo.c_str());
  rmdir(dir);
}

TEST(State, RankZeroOutputsCarryStrides) {
  grove_context *ctx = nullptr;
  ASSERT_GROVE_OK(grove_context_create(&addmodel_model, &ctx));
  HostTensor<float> w({4}, {0, 0, 0, 0}, f32());
  ASSERT_GROVE_OK(grove_context_set_weight(ctx, "w", w.get()));
  HostTensor<float> x({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}, f32());
  const DLTensor *in[] = {x.get()};
  DLManagedTensor *outs[2] = {nullptr, nullptr};
  ASSERT_GROVE_OK(grove_invoke(ctx, "stats", in, 1, outs, 2));
  EXPECT_EQ(outs[1]->dl_tensor.ndim, 0);
  EXPECT_NE(outs[1]->dl_tensor.strides, nullptr);
  EXPECT_NE(outs[1]->dl_tensor.shape, nullptr);
  EXPECT_EQ(*static_cast<float *>(outs[1]->dl_tensor.data), 36.0f);
  for (DLManagedTensor *t : outs)
    t->deleter(t);
  grove_context_destroy(ctx);
}

/// A service a context owns, found by generated code through the call.
struct Counter : grove::rt::Service {
  static const char kKey;
  int calls = 0;
};
const char Counter::kKey = 0;

void countCall(void **) {
  const grove::rt::CurrentCall *call = grove::rt::currentCall();
  if (!call)
    return;
  if (auto *c =
          static_cast<Counter *>(call->context().services.find(&Counter::kKey)))
    c->calls += 1 + static_cast<int>(call->entry());
}

TEST(State, ServicesFindTheirContextThroughTheCurrentCall) {
  static const grove_packed_fn entries[] = {countCall, countCall};
  static const grove_model_def model = {
      GROVE_ABI_VERSION, 2, "svc",
      "{\"format\":\"grove-model\",\"version\":7,\"module\":\"svc\",\"target\":"
      "\"host\",\n"
      "\"state\":[],\n"
      "\"entries\":[{\"name\":\"a\",\"args\":[],\"inputs\":[],\"outputs\":[]},"
      "\n"
      "{\"name\":\"b\",\"args\":[],\"inputs\":[],\"outputs\":[]}]}\n",
      entries};
  grove_context *one = nullptr, *two = nullptr;
  ASSERT_GROVE_OK(grove_context_create(&model, &one));
  ASSERT_GROVE_OK(grove_context_create(&model, &two));
  auto counter = std::make_unique<Counter>();
  Counter *seen = counter.get();
  one->services.add(&Counter::kKey, std::move(counter));
  EXPECT_EQ(grove::rt::currentCall(), nullptr);
  ASSERT_GROVE_OK(grove_invoke(one, "a", nullptr, 0, nullptr, 0));
  ASSERT_GROVE_OK(grove_invoke(one, "b", nullptr, 0, nullptr, 0));
  // The other context has no counter: its calls find none.
  ASSERT_GROVE_OK(grove_invoke(two, "b", nullptr, 0, nullptr, 0));
  EXPECT_EQ(seen->calls, 1 + 2);
  EXPECT_EQ(grove::rt::currentCall(), nullptr) << "the scope leaked";
  grove_context_destroy(one);
  grove_context_destroy(two);
}

} // namespace

//===- InvokeTest.cpp - Calling entries: checks, results, ownership -------===//

#include "TestModels.h"
#include "TestUtil.h"

#include <atomic>
#include <thread>

using namespace grove::test;

namespace {

const std::vector<float> kW = {10.0f, 20.0f, 30.0f, 40.0f};

class AddModel : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_GROVE_OK(grove_context_create(&addmodel_model, &ctx));
    F32Tensor w({4}, kW, f32());
    ASSERT_GROVE_OK(grove_context_set_weight(ctx, "w", w.get()));
  }
  void TearDown() override { grove_context_destroy(ctx); }

  /// Calls entry `name` with one input and one output.
  grove_status call1(const char *name, DLTensor *x, ManagedPtr &out) {
    const DLTensor *inputs[] = {x};
    return grove_invoke(ctx, name, inputs, 1, &out.p, 1);
  }

  static void expectCompactF32(const DLTensor &t,
                               const std::vector<int64_t> &shape) {
    EXPECT_EQ(t.device.device_type, kDLCPU);
    EXPECT_EQ(t.dtype.code, kDLFloat);
    EXPECT_EQ(t.dtype.bits, 32);
    EXPECT_EQ(t.dtype.lanes, 1);
    ASSERT_EQ(t.ndim, static_cast<int>(shape.size()));
    int64_t stride = 1;
    for (int i = t.ndim - 1; i >= 0; --i) {
      EXPECT_EQ(t.shape[i], shape[i]);
      ASSERT_NE(t.strides, nullptr);
      if (shape[i] != 1) {
        EXPECT_EQ(t.strides[i], stride);
      }
      stride *= shape[i];
    }
    EXPECT_EQ(t.byte_offset, 0u);
  }

  grove_context *ctx = nullptr;
};

TEST_F(AddModel, AddByName) {
  F32Tensor x({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}, f32());
  ManagedPtr y;
  ASSERT_GROVE_OK(call1("add", x.get(), y));
  ASSERT_NE(y.p, nullptr);
  expectCompactF32(y.p->dl_tensor, {2, 4});
  EXPECT_EQ(y.values(), (std::vector<float>{11, 22, 33, 44, 15, 26, 37, 48}));
  ASSERT_NE(y.p->deleter, nullptr);
}

TEST_F(AddModel, AddThroughTypedWrapper) {
  F32Tensor x({1, 4}, {1, 1, 1, 1}, f32());
  DLManagedTensor *y = nullptr;
  ASSERT_GROVE_OK(static_cast<grove_status>(addmodel_add(ctx, x.get(), &y)));
  ManagedPtr owner(y);
  EXPECT_EQ(owner.values(), (std::vector<float>{11, 21, 31, 41}));
}

TEST_F(AddModel, ZeroRowsAndExplicitCompactStrides) {
  F32Tensor empty({0, 4}, {}, f32());
  ManagedPtr y;
  ASSERT_GROVE_OK(call1("add", empty.get(), y)); // NULL data, no elements
  expectCompactF32(y.p->dl_tensor, {0, 4});
  EXPECT_NE(y.p->dl_tensor.data, nullptr);

  F32Tensor x({1, 4}, {0, 0, 0, 0}, f32());
  int64_t strides[] = {999, 1}; // size-1 dim: stride never used
  x.t.strides = strides;
  ManagedPtr y2;
  ASSERT_GROVE_OK(call1("add", x.get(), y2));
  EXPECT_EQ(y2.values(), kW);
}

TEST_F(AddModel, ByteOffsetIsHonoured) {
  F32Tensor x({1, 4}, {-1, 1, 2, 3, 4}, f32());
  x.t.byte_offset = sizeof(float);
  ManagedPtr y;
  ASSERT_GROVE_OK(call1("add", x.get(), y));
  EXPECT_EQ(y.values(), (std::vector<float>{11, 22, 33, 44}));
}

TEST_F(AddModel, ReturnedInputBufferIsCopied) {
  F32Tensor x({3}, {1, 2, 3}, f32());
  ManagedPtr y;
  ASSERT_GROVE_OK(call1("identity", x.get(), y));
  EXPECT_NE(y.p->dl_tensor.data, x.t.data);
  EXPECT_EQ(y.values(), x.values);
}

TEST_F(AddModel, ReturnedParamBufferIsCopied) {
  ManagedPtr y;
  ASSERT_GROVE_OK(grove_invoke(ctx, "param_alias", nullptr, 0, &y.p, 1));
  DLTensor view;
  ASSERT_GROVE_OK(grove_context_get_weight(ctx, "w", &view));
  EXPECT_NE(y.p->dl_tensor.data, view.data);
  EXPECT_EQ(y.values(), kW);
}

TEST_F(AddModel, GlobalConstantResultIsCopied) {
  ManagedPtr y;
  ASSERT_GROVE_OK(grove_invoke(ctx, "constant", nullptr, 0, &y.p, 1));
  expectCompactF32(y.p->dl_tensor, {3});
  EXPECT_EQ(y.values(), (std::vector<float>{1.5f, 2.5f, 3.5f}));
}

TEST_F(AddModel, StridedResultIsCompacted) {
  F32Tensor x({2, 3}, {1, 2, 3, 4, 5, 6}, f32());
  ManagedPtr y;
  ASSERT_GROVE_OK(call1("transpose", x.get(), y));
  expectCompactF32(y.p->dl_tensor, {3, 2});
  EXPECT_EQ(y.values(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(y.p->dl_tensor.data) % 64, 0u);
}

TEST_F(AddModel, SameBufferReturnedTwiceIsNotDoubleFreed) {
  F32Tensor x({3}, {1, 2, 3}, f32());
  const DLTensor *inputs[] = {x.get()};
  DLManagedTensor *outs[2] = {nullptr, nullptr};
  ASSERT_GROVE_OK(grove_invoke(ctx, "twice", inputs, 1, outs, 2));
  ManagedPtr a(outs[0]), b(outs[1]);
  EXPECT_NE(a.p->dl_tensor.data, b.p->dl_tensor.data);
  EXPECT_EQ(a.values(), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(b.values(), (std::vector<float>{2, 4, 6}));
}

TEST_F(AddModel, MixedRankResultsAreLaidOutBackToBack) {
  F32Tensor x({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}, f32());
  const DLTensor *inputs[] = {x.get()};
  DLManagedTensor *outs[2] = {nullptr, nullptr};
  ASSERT_GROVE_OK(grove_invoke(ctx, "stats", inputs, 1, outs, 2));
  ManagedPtr rowsum(outs[0]), total(outs[1]);
  expectCompactF32(rowsum.p->dl_tensor, {2});
  EXPECT_EQ(rowsum.values(), (std::vector<float>{10, 26}));
  expectCompactF32(total.p->dl_tensor, {});
  EXPECT_EQ(total.values(), (std::vector<float>{36}));
}

TEST_F(AddModel, EntryWithoutInputsOrOutputs) {
  ASSERT_GROVE_OK(grove_invoke(ctx, "nothing", nullptr, 0, nullptr, 0));
  void **noArgs = nullptr;
  ASSERT_GROVE_OK(static_cast<grove_status>(
      grove_rt_invoke(ctx, &addmodel_model, 11, noArgs)));
}

// Values outside an input's bound are refused before the entry runs.
TEST_F(AddModel, BoundedInputValues) {
  std::vector<int32_t> labels = {0, 3, 1};
  int64_t shape[] = {3};
  DLTensor t{};
  t.data = labels.data();
  t.device = {kDLCPU, 0};
  t.ndim = 1;
  t.dtype = {kDLInt, 32, 1};
  t.shape = shape;
  const DLTensor *inputs[] = {&t};
  int calls = boundedCalls();
  ASSERT_GROVE_OK(grove_invoke(ctx, "bounded", inputs, 1, nullptr, 0));
  EXPECT_EQ(boundedCalls(), calls + 1);
  for (int32_t bad : {4, -1}) {
    labels[2] = bad;
    EXPECT_EQ(grove_invoke(ctx, "bounded", inputs, 1, nullptr, 0),
              GROVE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(grove_last_error())
                  .find("'labels': element 2 is " + std::to_string(bad) +
                        ", outside [0, 4)"),
              std::string::npos)
        << grove_last_error();
    EXPECT_EQ(boundedCalls(), calls + 1);
  }
  shape[0] = 0; // an empty batch has nothing to check
  ASSERT_GROVE_OK(grove_invoke(ctx, "bounded", inputs, 1, nullptr, 0));
}

TEST_F(AddModel, MatmulServiceThroughEntry) {
  F32Tensor a({2, 3}, {1, 2, 3, 4, 5, 6}, f32());
  F32Tensor b({3, 2}, {7, 8, 9, 10, 11, 12}, f32());
  const DLTensor *inputs[] = {a.get(), b.get()};
  ManagedPtr c;
  ASSERT_GROVE_OK(grove_invoke(ctx, "matmul", inputs, 2, &c.p, 1));
  EXPECT_EQ(c.values(), (std::vector<float>{58, 64, 139, 154}));
}

//--- Misbehaving generated code -----------------------------------------===//

TEST_F(AddModel, NegativeResultSizeIsInternalError) {
  DLManagedTensor *y = reinterpret_cast<DLManagedTensor *>(0x1);
  EXPECT_FAILS(grove_invoke(ctx, "bad_shape", nullptr, 0, &y, 1),
               GROVE_ERROR_INTERNAL, "impossible shape [-5]");
  EXPECT_EQ(y, nullptr);
  freeBadShapeBuffer();
}

TEST_F(AddModel, WrongStaticResultSizeIsInternalError) {
  DLManagedTensor *y = nullptr;
  EXPECT_FAILS(grove_invoke(ctx, "wrong_static", nullptr, 0, &y, 1),
               GROVE_ERROR_INTERNAL, "signature says [3]");
  EXPECT_EQ(y, nullptr);
}

TEST_F(AddModel, FailingServiceIsInternalError) {
  EXPECT_FAILS(grove_invoke(ctx, "bad_matmul", nullptr, 0, nullptr, 0),
               GROVE_ERROR_INTERNAL, "grove_rt_matmul_f32: shape mismatch");
  // The pending service error is consumed: the next call is clean.
  ASSERT_GROVE_OK(grove_invoke(ctx, "nothing", nullptr, 0, nullptr, 0));
}

//--- Argument checks
//------------------------------------------------------===//

TEST_F(AddModel, RejectsNullContextAndNames) {
  F32Tensor x({1, 4}, {1, 2, 3, 4}, f32());
  const DLTensor *inputs[] = {x.get()};
  DLManagedTensor *y = reinterpret_cast<DLManagedTensor *>(0x1);
  EXPECT_FAILS(grove_invoke(nullptr, "add", inputs, 1, &y, 1),
               GROVE_ERROR_INVALID_ARGUMENT, "ctx");
  EXPECT_EQ(y, nullptr);
  EXPECT_FAILS(grove_invoke(ctx, nullptr, inputs, 1, &y, 1),
               GROVE_ERROR_INVALID_ARGUMENT, "entry");
  EXPECT_FAILS(grove_invoke(ctx, "sub", inputs, 1, &y, 1),
               GROVE_ERROR_INVALID_ARGUMENT, "no entry 'sub'");
  void *args[] = {x.get(), &y};
  // The typed wrapper's path: the slot is cleared without a context too
  // (the model's descriptor says which slots are outputs).
  y = reinterpret_cast<DLManagedTensor *>(0x1);
  EXPECT_FAILS(static_cast<grove_status>(
                   grove_rt_invoke(nullptr, &addmodel_model, 0, args)),
               GROVE_ERROR_INVALID_ARGUMENT, "ctx");
  EXPECT_EQ(y, nullptr);
  EXPECT_FAILS(
      static_cast<grove_status>(grove_rt_invoke(ctx, nullptr, 0, args)),
      GROVE_ERROR_INVALID_ARGUMENT, "model");
  EXPECT_FAILS(static_cast<grove_status>(
                   grove_rt_invoke(ctx, &addmodel_model, 13, args)),
               GROVE_ERROR_INVALID_ARGUMENT, "out of range");
  EXPECT_FAILS(static_cast<grove_status>(
                   grove_rt_invoke(ctx, &addmodel_model, 0, nullptr)),
               GROVE_ERROR_INVALID_ARGUMENT, "args");
}

TEST_F(AddModel, RejectsContextOfAnotherModel) {
  F32Tensor x({1, 4}, {1, 2, 3, 4}, f32());
  DLManagedTensor *y = reinterpret_cast<DLManagedTensor *>(0x1);
  void *args[] = {x.get(), &y};
  EXPECT_FAILS(static_cast<grove_status>(
                   grove_rt_invoke(ctx, &addmodel_twin_model, 0, args)),
               GROVE_ERROR_INVALID_ARGUMENT, "created for model");
  grove_context *other = nullptr;
  ASSERT_GROVE_OK(grove_context_create(&two_model, &other));
  EXPECT_FAILS(static_cast<grove_status>(
                   grove_rt_invoke(other, &addmodel_model, 0, args)),
               GROVE_ERROR_INVALID_ARGUMENT, "'two'");
  grove_context_destroy(other);
  EXPECT_EQ(y, nullptr);
}

TEST_F(AddModel, RejectsNullTensorAndNullOutputSlot) {
  DLManagedTensor *y = nullptr;
  const DLTensor *inputs[] = {nullptr};
  EXPECT_FAILS(grove_invoke(ctx, "add", inputs, 1, &y, 1),
               GROVE_ERROR_INVALID_ARGUMENT, "input 0 'x': tensor is NULL");
  EXPECT_FAILS(grove_invoke(ctx, "add", nullptr, 1, &y, 1),
               GROVE_ERROR_INVALID_ARGUMENT, "NULL");
  F32Tensor x({1, 4}, {1, 2, 3, 4}, f32());
  const DLTensor *good[] = {x.get()};
  EXPECT_FAILS(grove_invoke(ctx, "add", good, 1, nullptr, 1),
               GROVE_ERROR_INVALID_ARGUMENT, "NULL");
  void *args[] = {x.get(), nullptr};
  EXPECT_FAILS(
      static_cast<grove_status>(grove_rt_invoke(ctx, &addmodel_model, 0, args)),
      GROVE_ERROR_INVALID_ARGUMENT, "output 0 'y': output slot");
  void *nullInput[] = {nullptr, &y};
  EXPECT_FAILS(static_cast<grove_status>(
                   grove_rt_invoke(ctx, &addmodel_model, 0, nullInput)),
               GROVE_ERROR_INVALID_ARGUMENT, "tensor is NULL");
}

TEST_F(AddModel, RejectsWrongCounts) {
  F32Tensor x({1, 4}, {1, 2, 3, 4}, f32());
  const DLTensor *inputs[] = {x.get(), x.get()};
  DLManagedTensor *outs[2] = {nullptr, nullptr};
  EXPECT_FAILS(grove_invoke(ctx, "add", inputs, 2, outs, 1),
               GROVE_ERROR_INVALID_ARGUMENT, "takes 1 inputs and 1 outputs");
  EXPECT_FAILS(grove_invoke(ctx, "add", inputs, 0, outs, 1),
               GROVE_ERROR_INVALID_ARGUMENT, "got 0 and 1");
  EXPECT_FAILS(grove_invoke(ctx, "add", inputs, 1, outs, 2),
               GROVE_ERROR_INVALID_ARGUMENT, "got 1 and 2");
  EXPECT_EQ(outs[0], nullptr);
  EXPECT_EQ(outs[1], nullptr);
}

struct BadInput {
  const char *label;
  void (*mutate)(DLTensor &t);
  const char *needle;
};

int64_t gNegativeShape[] = {-1, 4};
int64_t gWrongStatic[] = {2, 5};
int64_t gTransposedStrides[] = {1, 2};
int64_t gPaddedStrides[] = {8, 1};

class BadAddInput : public AddModel,
                    public ::testing::WithParamInterface<BadInput> {};

TEST_P(BadAddInput, IsRejectedByBothEntryPoints) {
  F32Tensor x({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, f32());
  GetParam().mutate(x.t);
  DLManagedTensor *y = reinterpret_cast<DLManagedTensor *>(0x1);
  const DLTensor *inputs[] = {x.get()};
  EXPECT_FAILS(grove_invoke(ctx, "add", inputs, 1, &y, 1),
               GROVE_ERROR_INVALID_ARGUMENT, GetParam().needle);
  EXPECT_EQ(y, nullptr);
  std::string message = grove_last_error();
  EXPECT_NE(message.find("entry 'add' input 0 'x'"), std::string::npos)
      << message;

  y = reinterpret_cast<DLManagedTensor *>(0x1);
  void *args[] = {x.get(), &y};
  EXPECT_FAILS(
      static_cast<grove_status>(grove_rt_invoke(ctx, &addmodel_model, 0, args)),
      GROVE_ERROR_INVALID_ARGUMENT, GetParam().needle);
  EXPECT_EQ(y, nullptr);
}

INSTANTIATE_TEST_SUITE_P(
    Runtime, BadAddInput,
    ::testing::Values(
        BadInput{"CudaDevice",
                 [](DLTensor &t) { t.device.device_type = kDLCUDA; },
                 "not kDLCPU"},
        BadInput{"CudaHostDevice",
                 [](DLTensor &t) { t.device.device_type = kDLCUDAHost; },
                 "not kDLCPU"},
        BadInput{"Int32",
                 [](DLTensor &t) {
                   t.dtype = {kDLInt, 32, 1};
                 },
                 "expected dtype f32, got i32"},
        BadInput{"Float64",
                 [](DLTensor &t) {
                   t.dtype = {kDLFloat, 64, 1};
                 },
                 "got f64"},
        BadInput{"TwoLanes",
                 [](DLTensor &t) {
                   t.dtype = {kDLFloat, 32, 2};
                 },
                 "lanes=2"},
        BadInput{"Bfloat16",
                 [](DLTensor &t) {
                   t.dtype = {kDLBfloat, 16, 1};
                 },
                 "got bf16"},
        BadInput{"RankTooLow", [](DLTensor &t) { t.ndim = 1; },
                 "expected rank 2 [?, 4], got rank 1"},
        BadInput{"RankTooHigh", [](DLTensor &t) { t.ndim = 3; }, "rank 3"},
        BadInput{"NegativeRank", [](DLTensor &t) { t.ndim = -1; }, "rank -1"},
        BadInput{"NullShape", [](DLTensor &t) { t.shape = nullptr; },
                 "shape is NULL"},
        BadInput{"WrongStaticDim", [](DLTensor &t) { t.shape = gWrongStatic; },
                 "dimension 1 is 5, expected 4"},
        BadInput{"NegativeDim", [](DLTensor &t) { t.shape = gNegativeShape; },
                 "dimension 0 is negative"},
        BadInput{"TransposedStrides",
                 [](DLTensor &t) { t.strides = gTransposedStrides; },
                 "not compact"},
        BadInput{"PaddedStrides",
                 [](DLTensor &t) { t.strides = gPaddedStrides; },
                 "strides [8, 1]"},
        BadInput{"NullData", [](DLTensor &t) { t.data = nullptr; },
                 "data is NULL but the tensor has 8 elements"},
        BadInput{"MisalignedData", [](DLTensor &t) { t.byte_offset = 2; },
                 "not aligned to 4 bytes"}),
    [](const ::testing::TestParamInfo<BadInput> &info) {
      return std::string(info.param.label);
    });

TEST(Invoke, RejectsCallsBeforeWeightsAreLoaded) {
  grove_context *ctx = nullptr;
  ASSERT_GROVE_OK(grove_context_create(&addmodel_model, &ctx));
  F32Tensor x({1, 4}, {1, 2, 3, 4}, f32());
  const DLTensor *inputs[] = {x.get()};
  DLManagedTensor *y = reinterpret_cast<DLManagedTensor *>(0x1);
  EXPECT_FAILS(grove_invoke(ctx, "add", inputs, 1, &y, 1),
               GROVE_ERROR_BAD_WEIGHTS, "param 'w' is not set");
  EXPECT_EQ(y, nullptr);
  EXPECT_FAILS(static_cast<grove_status>(addmodel_add(ctx, x.get(), &y)),
               GROVE_ERROR_BAD_WEIGHTS, "load the weights");
  grove_context_destroy(ctx);
}

// Generated code takes its buffers from the runtime (abi.h); one the
// runtime cannot get abandons the call instead of being handed over as NULL
// and written through.
extern "C" void *_mlir_memref_to_llvm_alloc(size_t bytes);
extern "C" void _mlir_memref_to_llvm_free(void *p);
std::atomic<int> hogReturns{0}, hogNulls{0};
void *hogSmall = nullptr;
void hog(void **) {
  void *small = _mlir_memref_to_llvm_alloc(64); // freed by the abandon
  hogSmall = small;
  auto *huge = static_cast<char *>(_mlir_memref_to_llvm_alloc(size_t(1) << 50));
  if (!huge)
    ++hogNulls;
  else
    _mlir_memref_to_llvm_free(huge);
  _mlir_memref_to_llvm_free(small);
  ++hogReturns;
}
void modest(void **) {
  _mlir_memref_to_llvm_free(_mlir_memref_to_llvm_alloc(size_t(1) << 20));
  ++hogReturns;
}
const grove_packed_fn kHogEntries[] = {hog, modest};
const grove_model_def kHogModel = {
    GROVE_ABI_VERSION, 2, "hogm",
    "{\"format\":\"grove-model\",\"version\":7,\"module\":\"hogm\",\"target\":"
    "\"host\",\n"
    "\"state\":[],\n"
    "\"entries\":[{\"name\":\"hog\",\"args\":[],\"inputs\":[],\"outputs\":[]},"
    "\n"
    "{\"name\":\"modest\",\"args\":[],\"inputs\":[],\"outputs\":[]}]}\n",
    kHogEntries};

TEST(Invoke, BufferItCannotGetAbandonsTheCall) {
  grove_context *ctx = nullptr;
  ASSERT_GROVE_OK(grove_context_create(&kHogModel, &ctx));
  hogReturns = hogNulls = 0;
  EXPECT_FAILS(grove_invoke(ctx, "hog", nullptr, 0, nullptr, 0),
               GROVE_ERROR_OUT_OF_MEMORY,
               "entry 'hog': out of memory: cannot allocate a "
               "1125899906842624-byte buffer");
  EXPECT_EQ(hogNulls, 0) << "the code was handed a NULL buffer";
  EXPECT_EQ(hogReturns, 0) << "the code ran on after the failed allocation";
  // The abandon freed the block the call held: it is this thread's next
  // block of its size class.
  void *again = _mlir_memref_to_llvm_alloc(64);
  EXPECT_EQ(again, hogSmall) << "the abandoned call's block was not freed";
  _mlir_memref_to_llvm_free(again);
  // The context and the thread are fine afterwards.
  ASSERT_GROVE_OK(grove_invoke(ctx, "modest", nullptr, 0, nullptr, 0));
  EXPECT_EQ(hogReturns, 1);
  grove_context_destroy(ctx);
}

// Sizes the descriptor says are equal (`equal` clauses) are checked before
// the code runs: a mismatch never reaches it.
std::atomic<int> pairCalls{0};
void pairCode(void **) { ++pairCalls; }
const grove_packed_fn kPairEntries[] = {pairCode};
const grove_model_def kPairModel = {
    GROVE_ABI_VERSION, 1, "pairm",
    "{\"format\":\"grove-model\",\"version\":7,\"module\":\"pairm\",\"target\":"
    "\"host\",\n"
    "\"state\":[],\n"
    "\"entries\":[{\"name\":\"pair\",\"args\":[{\"input\":0},{\"input\":1}],"
    "\"inputs\":[{\"name\":\"x\",\"dtype\":\"f32\",\"shape\":[-1,3]},{\"name\":"
    "\"labels\",\"dtype\":\"f32\",\"shape\":[-1],\"preconditions\":[{\"kind\":"
    "\"equal_dim\",\"dim\":0,\"input\":0,\"input_dim\":0}]}],\"outputs\":[]}]}"
    "\n",
    kPairEntries};

TEST(Invoke, UnequalSizesAreRejectedBeforeTheCode) {
  grove_context *ctx = nullptr;
  ASSERT_GROVE_OK(grove_context_create(&kPairModel, &ctx));
  pairCalls = 0;
  F32Tensor x({2, 3}, {1, 2, 3, 4, 5, 6}, f32());
  F32Tensor three({3}, {1, 2, 3}, f32()), two({2}, {1, 2}, f32());
  const DLTensor *bad[] = {x.get(), three.get()};
  EXPECT_FAILS(grove_invoke(ctx, "pair", bad, 2, nullptr, 0),
               GROVE_ERROR_INVALID_ARGUMENT,
               "entry 'pair' input 1 'labels': dimension 0 is 3 but must "
               "equal dimension 0 of input 0 'x' (2)");
  EXPECT_EQ(pairCalls, 0);
  const DLTensor *good[] = {x.get(), two.get()};
  ASSERT_GROVE_OK(grove_invoke(ctx, "pair", good, 2, nullptr, 0));
  EXPECT_EQ(pairCalls, 1);
  grove_context_destroy(ctx);
}

TEST_F(AddModel, LastErrorIsPerThread) {
  EXPECT_FAILS(grove_invoke(ctx, "nope", nullptr, 0, nullptr, 0),
               GROVE_ERROR_INVALID_ARGUMENT, "nope");
  std::string otherThreadMessage = "unset";
  std::thread([&] {
    otherThreadMessage = grove_last_error(); // nothing failed there yet
    grove_invoke(nullptr, "x", nullptr, 0, nullptr, 0);
  }).join();
  EXPECT_EQ(otherThreadMessage, "");
  EXPECT_NE(std::string(grove_last_error()).find("nope"), std::string::npos);
}

TEST_F(AddModel, ConcurrentCallsOnOneContext) {
  std::atomic<int> failures{0};
  auto worker = [&](float base) {
    for (int i = 0; i < 200; ++i) {
      F32Tensor x({1, 4}, {base, base, base, base}, f32());
      const DLTensor *inputs[] = {x.get()};
      ManagedPtr y;
      if (grove_invoke(ctx, "add", inputs, 1, &y.p, 1) != GROVE_OK ||
          y.values() !=
              std::vector<float>{base + 10, base + 20, base + 30, base + 40})
        ++failures;
    }
  };
  std::thread t1(worker, 1.0f), t2(worker, 100.0f);
  t1.join();
  t2.join();
  EXPECT_EQ(failures.load(), 0);
}

} // namespace

//===- DescriptorTest.cpp - Model descriptor parsing and introspection ----===//

#include "TestModels.h"
#include "TestUtil.h"

#include <random>

using namespace grove::test;

namespace {

void noop(void **) {}
const grove_packed_fn kNoops[8] = {noop, noop, noop, noop,
                                   noop, noop, noop, noop};

/// Builds a model def over `descriptor` with `entries` no-op entries.
grove_model_def modelFor(const char *name, const std::string &descriptor,
                         uint32_t entries) {
  return {GROVE_ABI_VERSION, entries, name, descriptor.c_str(), kNoops};
}

const std::string kMlp = "grove-model 5\n"
                         "module mlp\n"
                         "param fc1.weight f32 2 128 64\n"
                         "param fc1.bias f32 1 128\n"
                         "entry forward 1 1\n"
                         "input x f32 2 -1 64\n"
                         "output out0 f32 2 -1 10\n";

struct ContextPtr {
  grove_context *ctx = nullptr;
  ~ContextPtr() { grove_context_destroy(ctx); }
};

TEST(Descriptor, ParsesDocumentedExample) {
  grove_model_def model = modelFor("mlp", kMlp, 1);
  ContextPtr c;
  ASSERT_GROVE_OK(grove_context_create(&model, &c.ctx));
  EXPECT_EQ(grove_context_model(c.ctx), &model);
  ASSERT_EQ(grove_context_num_params(c.ctx), 2u);
  const grove_tensor_sig *p = nullptr;
  ASSERT_GROVE_OK(grove_context_param(c.ctx, 0, &p));
  EXPECT_STREQ(p->name, "fc1.weight");
  EXPECT_EQ(p->dtype.code, kDLFloat);
  EXPECT_EQ(p->dtype.bits, 32);
  EXPECT_EQ(p->dtype.lanes, 1);
  ASSERT_EQ(p->ndim, 2);
  EXPECT_EQ(p->shape[0], 128);
  EXPECT_EQ(p->shape[1], 64);

  ASSERT_EQ(grove_context_num_entries(c.ctx), 1u);
  const grove_entry_sig *e = nullptr;
  ASSERT_GROVE_OK(grove_context_entry(c.ctx, 0, &e));
  EXPECT_STREQ(e->name, "forward");
  ASSERT_EQ(e->num_inputs, 1u);
  ASSERT_EQ(e->num_outputs, 1u);
  EXPECT_STREQ(e->inputs[0].name, "x");
  EXPECT_EQ(e->inputs[0].shape[0], -1);
  EXPECT_EQ(e->inputs[0].shape[1], 64);
  EXPECT_STREQ(e->outputs[0].name, "out0");
  EXPECT_EQ(e->outputs[0].shape[1], 10);

  uint32_t index = 99;
  ASSERT_GROVE_OK(grove_context_find_entry(c.ctx, "forward", &index));
  EXPECT_EQ(index, 0u);
  EXPECT_FAILS(grove_context_find_entry(c.ctx, "backward", &index),
               GROVE_ERROR_INVALID_ARGUMENT, "backward");
  EXPECT_EQ(grove_context_weights_ready(c.ctx), 0);
}

TEST(Descriptor, AllDTypesAndRankZero) {
  std::string text = "grove-model 5\nmodule m\n"
                     "param a f32 0\nparam b f16 1 2\nparam c bf16 1 2\n"
                     "param d f64 1 2\nparam e i8 1 2\nparam f i16 1 2\n"
                     "param g i32 1 2\nparam h i64 1 2\nparam i i1 1 2\n";
  grove_model_def model = modelFor("m", text, 0);
  ContextPtr c;
  ASSERT_GROVE_OK(grove_context_create(&model, &c.ctx));
  const DLDataType expected[] = {
      {kDLFloat, 32, 1}, {kDLFloat, 16, 1}, {kDLBfloat, 16, 1},
      {kDLFloat, 64, 1}, {kDLInt, 8, 1},    {kDLInt, 16, 1},
      {kDLInt, 32, 1},   {kDLInt, 64, 1},   {GROVE_DL_BOOL, 8, 1}};
  ASSERT_EQ(grove_context_num_params(c.ctx), 9u);
  for (uint32_t i = 0; i < 9; ++i) {
    const grove_tensor_sig *p = nullptr;
    ASSERT_GROVE_OK(grove_context_param(c.ctx, i, &p));
    EXPECT_EQ(p->dtype.code, expected[i].code) << i;
    EXPECT_EQ(p->dtype.bits, expected[i].bits) << i;
    EXPECT_EQ(p->dtype.lanes, 1) << i;
  }
  const grove_tensor_sig *p = nullptr;
  ASSERT_GROVE_OK(grove_context_param(c.ctx, 0, &p));
  EXPECT_EQ(p->ndim, 0);
}

TEST(Descriptor, EntriesWithoutInputsOrOutputsAndInterleavedParams) {
  std::string text = "grove-model 5\nmodule m\n"
                     "entry a 0 0\n"
                     "param p i64 2 0 3\n"
                     "entry b 0 1\noutput o i1 1 -1\n";
  grove_model_def model = modelFor("m", text, 2);
  ContextPtr c;
  ASSERT_GROVE_OK(grove_context_create(&model, &c.ctx));
  EXPECT_EQ(grove_context_num_entries(c.ctx), 2u);
  EXPECT_EQ(grove_context_num_params(c.ctx), 1u);
}

TEST(Descriptor, NoParamsNoEntries) {
  grove_model_def model = {GROVE_ABI_VERSION, 0, "m",
                           "grove-model 5\nmodule m\n", nullptr};
  ContextPtr c;
  ASSERT_GROVE_OK(grove_context_create(&model, &c.ctx));
  EXPECT_EQ(grove_context_weights_ready(c.ctx), 1); // nothing to load
}

// State kinds and access: initialised state, and entries that read and
// write it, in argument order; state may be declared after its users.
TEST(Descriptor, StateKindsAndAccess) {
  std::string text = "grove-model 5\nmodule m\n"
                     "entry step 3 0\nwrite m\ninput x f32 1 -1\nread w\n"
                     "entry look 1 0\nread m\n"
                     "param w f32 1 4\nstate m f32 1 4 init 0x3f800000\n";
  grove_model_def model = modelFor("m", text, 2);
  ContextPtr c;
  ASSERT_GROVE_OK(grove_context_create(&model, &c.ctx));
  grove_param_kind kind;
  ASSERT_GROVE_OK(grove_context_param_kind(c.ctx, 0, &kind));
  EXPECT_EQ(kind, GROVE_PARAM_WEIGHT);
  ASSERT_GROVE_OK(grove_context_param_kind(c.ctx, 1, &kind));
  EXPECT_EQ(kind, GROVE_PARAM_STATE);
  int access = -1;
  ASSERT_GROVE_OK(grove_context_entry_access(c.ctx, 0, 1, &access));
  EXPECT_EQ(access, 2);
  ASSERT_GROVE_OK(grove_context_entry_access(c.ctx, 0, 0, &access));
  EXPECT_EQ(access, 1);
  ASSERT_GROVE_OK(grove_context_entry_access(c.ctx, 1, 0, &access));
  EXPECT_EQ(access, 0);
  ASSERT_GROVE_OK(grove_context_entry_access(c.ctx, 1, 1, &access));
  EXPECT_EQ(access, 1);
  EXPECT_FAILS(grove_context_entry_access(c.ctx, 2, 0, &access),
               GROVE_ERROR_INVALID_ARGUMENT, "out of range");
  EXPECT_FAILS(grove_context_param_kind(c.ctx, 2, &kind),
               GROVE_ERROR_INVALID_ARGUMENT, "out of range");
  // The entry's signature lists only the caller's inputs.
  const grove_entry_sig *e = nullptr;
  ASSERT_GROVE_OK(grove_context_entry(c.ctx, 0, &e));
  ASSERT_EQ(e->num_inputs, 1u);
  EXPECT_STREQ(e->inputs[0].name, "x");
  // The weight is missing; the state is there, at its initialiser.
  EXPECT_EQ(grove_context_weights_ready(c.ctx), 0);
}

TEST(Descriptor, OnlyInitializedStateIsReadyAtCreation) {
  std::string text = "grove-model 5\nmodule m\n"
                     "state s f32 1 3 init 0x40490fdb\n"
                     "state k i16 1 2 init 0xfffe\n";
  grove_model_def model = modelFor("m", text, 0);
  ContextPtr c;
  ASSERT_GROVE_OK(grove_context_create(&model, &c.ctx));
  EXPECT_EQ(grove_context_weights_ready(c.ctx), 1);
  DLTensor view;
  ASSERT_GROVE_OK(grove_context_get_weight(c.ctx, "s", &view));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(static_cast<float *>(view.data)[i], 3.14159274f);
  ASSERT_GROVE_OK(grove_context_get_weight(c.ctx, "k", &view));
  EXPECT_EQ(static_cast<int16_t *>(view.data)[1], -2);
}

TEST(Descriptor, Utf8NamesAccepted) {
  std::string text = "grove-model 5\nmodule m\nparam caf\xc3\xa9 f32 1 1\n";
  grove_model_def model = modelFor("m", text, 0);
  ContextPtr c;
  ASSERT_GROVE_OK(grove_context_create(&model, &c.ctx));
}

TEST(Descriptor, IntrospectionRejectsBadArguments) {
  grove_model_def model = modelFor("mlp", kMlp, 1);
  ContextPtr c;
  ASSERT_GROVE_OK(grove_context_create(&model, &c.ctx));
  const grove_entry_sig *e = nullptr;
  const grove_tensor_sig *p = nullptr;
  EXPECT_FAILS(grove_context_entry(c.ctx, 1, &e), GROVE_ERROR_INVALID_ARGUMENT,
               "out of range");
  EXPECT_EQ(e, nullptr);
  EXPECT_FAILS(grove_context_entry(nullptr, 0, &e),
               GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_FAILS(grove_context_entry(c.ctx, 0, nullptr),
               GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_FAILS(grove_context_param(c.ctx, 2, &p), GROVE_ERROR_INVALID_ARGUMENT,
               "out of range");
  EXPECT_FAILS(grove_context_param(nullptr, 0, &p),
               GROVE_ERROR_INVALID_ARGUMENT);
  uint32_t index = 0;
  EXPECT_FAILS(grove_context_find_entry(c.ctx, nullptr, &index),
               GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(grove_context_num_entries(nullptr), 0u);
  EXPECT_EQ(grove_context_num_params(nullptr), 0u);
  EXPECT_EQ(grove_context_model(nullptr), nullptr);
  EXPECT_EQ(grove_context_weights_ready(nullptr), 0);
  grove_context_destroy(nullptr); // no-op
}

TEST(Descriptor, CreateRejectsNullArguments) {
  grove_model_def model = modelFor("mlp", kMlp, 1);
  EXPECT_FAILS(grove_context_create(&model, nullptr),
               GROVE_ERROR_INVALID_ARGUMENT, "out_ctx");
  grove_context *ctx = reinterpret_cast<grove_context *>(0x1);
  EXPECT_FAILS(grove_context_create(nullptr, &ctx),
               GROVE_ERROR_INVALID_ARGUMENT, "model");
  EXPECT_EQ(ctx, nullptr);
}

TEST(Descriptor, AbiVersionMismatch) {
  grove_model_def model = modelFor("mlp", kMlp, 1);
  model.abi_version = GROVE_ABI_VERSION + 1;
  grove_context *ctx = nullptr;
  EXPECT_FAILS(grove_context_create(&model, &ctx), GROVE_ERROR_ABI_MISMATCH,
               "ABI version");
  EXPECT_EQ(ctx, nullptr);
  EXPECT_EQ(grove_runtime_abi_version(), GROVE_ABI_VERSION);
}

TEST(Descriptor, ModelDefInconsistencies) {
  grove_context *ctx = nullptr;
  grove_model_def model = modelFor("mlp", kMlp, 1);
  model.name = nullptr;
  EXPECT_FAILS(grove_context_create(&model, &ctx), GROVE_ERROR_INVALID_ARGUMENT,
               "name");
  model = modelFor("mlp", kMlp, 1);
  model.descriptor = nullptr;
  EXPECT_FAILS(grove_context_create(&model, &ctx), GROVE_ERROR_INVALID_ARGUMENT,
               "NULL");
  model = modelFor("other", kMlp, 1);
  EXPECT_FAILS(grove_context_create(&model, &ctx), GROVE_ERROR_INVALID_ARGUMENT,
               "module 'mlp'");
  model = modelFor("mlp", kMlp, 2);
  EXPECT_FAILS(grove_context_create(&model, &ctx), GROVE_ERROR_INVALID_ARGUMENT,
               "num_entries");
  model = modelFor("mlp", kMlp, 1);
  model.entries = nullptr;
  EXPECT_FAILS(grove_context_create(&model, &ctx), GROVE_ERROR_INVALID_ARGUMENT,
               "entry table");
  const grove_packed_fn nullFns[1] = {nullptr};
  model.entries = nullFns;
  EXPECT_FAILS(grove_context_create(&model, &ctx), GROVE_ERROR_INVALID_ARGUMENT,
               "forward");
  EXPECT_EQ(ctx, nullptr);
}

struct BadDescriptor {
  const char *label;
  std::string text;
  uint32_t entries;
  grove_status status;
  const char *needle;
};

class MalformedDescriptor : public ::testing::TestWithParam<BadDescriptor> {};

TEST_P(MalformedDescriptor, IsRejected) {
  const BadDescriptor &bad = GetParam();
  grove_model_def model = modelFor("m", bad.text, bad.entries);
  grove_context *ctx = reinterpret_cast<grove_context *>(0x1);
  EXPECT_FAILS(grove_context_create(&model, &ctx), bad.status, bad.needle);
  EXPECT_EQ(ctx, nullptr);
}

const std::string H = "grove-model 5\nmodule m\n";
const char kEmbeddedNul[] = "grove-model 5\nmodule m\0x\n";

std::string repeat(const std::string &s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += s;
  return out;
}
const grove_status INV = GROVE_ERROR_INVALID_ARGUMENT;

INSTANTIATE_TEST_SUITE_P(
    Runtime, MalformedDescriptor,
    ::testing::Values(
        BadDescriptor{"Empty", "", 0, INV, "empty"},
        BadDescriptor{"NoFinalNewline", "grove-model 5\nmodule m", 0, INV,
                      "newline"},
        BadDescriptor{"OnlyHeader", "grove-model 5\n", 0, INV, "module"},
        BadDescriptor{"FutureVersion", "grove-model 6\nmodule m\n", 0,
                      GROVE_ERROR_ABI_MISMATCH, "version 6"},
        BadDescriptor{"PastVersion", "grove-model 4\nmodule m\n", 0,
                      GROVE_ERROR_ABI_MISMATCH, "version 4"},
        BadDescriptor{"VersionNotNumber", "grove-model one\nmodule m\n", 0, INV,
                      "grove-model"},
        BadDescriptor{"WrongMagic", "grove 1\nmodule m\n", 0, INV,
                      "grove-model"},
        BadDescriptor{"MissingModuleKeyword", "grove-model 5\nmod m\n", 0, INV,
                      "module"},
        BadDescriptor{"ModuleNoName", "grove-model 5\nmodule\n", 0, INV,
                      "module"},
        BadDescriptor{"DoubleSpace", "grove-model 5\nmodule  m\n", 0, INV,
                      "one space"},
        BadDescriptor{"LeadingSpace", " grove-model 5\nmodule m\n", 0, INV,
                      "one space"},
        BadDescriptor{"TrailingSpace", H + "param a f32 1 2 \n", 0, INV,
                      "one space"},
        BadDescriptor{"Tab", H + "param\ta f32 1 2\n", 0, INV, "control"},
        BadDescriptor{"CRLF", "grove-model 5\r\nmodule m\r\n", 0, INV, ""},
        BadDescriptor{"EmptyLine", H + "\nparam a f32 1 2\n", 0, INV,
                      "empty line"},
        BadDescriptor{"UnknownKeyword", H + "buffer a f32 1 2\n", 0, INV,
                      "buffer"},
        BadDescriptor{"ParamDynamicDim", H + "param a f32 1 -1\n", 0, INV,
                      "static"},
        BadDescriptor{"ParamTooFewDims", H + "param a f32 2 3\n", 0, INV,
                      "rank 2"},
        BadDescriptor{"ParamTooManyDims", H + "param a f32 1 3 4\n", 0, INV,
                      "rank 1"},
        BadDescriptor{"ParamMissingRank", H + "param a f32\n", 0, INV, "NAME"},
        BadDescriptor{"NegativeRank", H + "param a f32 -1\n", 0, INV, "rank"},
        BadDescriptor{"HugeRank", H + "param a f32 99999999999999999999\n", 0,
                      INV, "rank"},
        BadDescriptor{"RankAboveLimit",
                      H + "param a f32 65" + repeat(" 1", 65) + "\n", 0, INV,
                      "rank"},
        BadDescriptor{"UnknownDType", H + "param a f128 1 2\n", 0, INV, "f128"},
        BadDescriptor{"UpperCaseDType", H + "param a F32 1 2\n", 0, INV, "F32"},
        BadDescriptor{"DimNotNumber", H + "param a f32 1 two\n", 0, INV, "two"},
        BadDescriptor{"DimPlusSign", H + "param a f32 1 +2\n", 0, INV, "+2"},
        BadDescriptor{"DimOverflow", H + "param a f32 1 9223372036854775808\n",
                      0, INV, "9223372036854775808"},
        BadDescriptor{"ParamBytesOverflow",
                      H + "param a f64 3 4294967296 4294967296 4294967296\n", 0,
                      INV, "too large"},
        BadDescriptor{"DuplicateParam", H + "param a f32 0\nparam a f32 0\n", 0,
                      INV, "duplicate param"},
        BadDescriptor{"InputDimBelowMinusOne",
                      H + "entry f 1 0\ninput x f32 1 -2\n", 1, INV, "-2"},
        BadDescriptor{"EntryTruncated", H + "entry f 1 1\ninput x f32 0\n", 1,
                      INV, "ends first"},
        BadDescriptor{"EntryOutputBeforeInput",
                      H + "entry f 1 1\noutput y f32 0\ninput x f32 0\n", 1,
                      INV, "expected 'input'"},
        BadDescriptor{"EntryTooManyTokens", H + "entry f 0 0 0\n", 0, INV,
                      "entry NAME"},
        BadDescriptor{"EntryNegativeCount", H + "entry f -1 0\n", 1, INV,
                      "argument count"},
        BadDescriptor{"EntryHugeCount", H + "entry f 99999999 0\n", 1, INV,
                      "argument count"},
        BadDescriptor{"StateWithoutInit", H + "state s f32 1 2\n", 0, INV,
                      "init 0xBITS"},
        BadDescriptor{"StateInitTooWide", H + "state s i8 1 2 init 0x100\n", 0,
                      INV, "at most 8 bits"},
        BadDescriptor{"StateInitNotHex", H + "state s f32 0 init 12\n", 0, INV,
                      "init 0xBITS"},
        BadDescriptor{"StateInitUpperHex", H + "state s f32 0 init 0xAB\n", 0,
                      INV, "init 0xBITS"},
        BadDescriptor{"StateDynamicDim", H + "state s f32 1 -1 init 0x0\n", 0,
                      INV, "static"},
        BadDescriptor{"ReservedParamName", H + "param __metadata__ f32 0\n", 0,
                      INV, "reserved"},
        BadDescriptor{"ReadUndeclared", H + "entry f 1 0\nread nope\n", 1, INV,
                      "undeclared state 'nope'"},
        BadDescriptor{"WriteTwice",
                      H + "param w f32 0\nentry f 2 0\nread w\nwrite w\n", 1,
                      INV, "twice"},
        BadDescriptor{"ReadNoName", H + "param w f32 0\nentry f 1 0\nread\n", 1,
                      INV, "read NAME"},
        BadDescriptor{"StateArgAsOutput",
                      H + "param w f32 0\nentry f 0 1\nread w\n", 1, INV,
                      "expected 'output'"},
        BadDescriptor{"DuplicateEntry", H + "entry f 0 0\nentry f 0 0\n", 2,
                      INV, "duplicate entry"},
        BadDescriptor{"DuplicateInput",
                      H + "entry f 2 0\ninput x f32 0\ninput x f32 0\n", 1, INV,
                      "duplicate input"},
        BadDescriptor{"StrayInput", H + "input x f32 0\n", 0, INV, "input"},
        BadDescriptor{"EntryCountMismatch", H + "entry f 0 0\n", 3, INV,
                      "num_entries"},
        BadDescriptor{"InvalidUtf8Name", H + "param a\xff f32 0\n", 0, INV,
                      "invalid name"},
        BadDescriptor{"OverlongUtf8Name", H + "param a\xc0\xaf f32 0\n", 0, INV,
                      "invalid name"},
        BadDescriptor{"SurrogateUtf8Name", H + "param a\xed\xa0\x80 f32 0\n", 0,
                      INV, "invalid name"},
        BadDescriptor{"ControlCharName", H + "param a\x01 f32 0\n", 0, INV,
                      "invalid name"},
        BadDescriptor{"EmbeddedNul",
                      std::string(kEmbeddedNul, sizeof(kEmbeddedNul) - 1), 0,
                      INV, "newline"}),
    [](const ::testing::TestParamInfo<BadDescriptor> &info) {
      return std::string(info.param.label);
    });

// Random edits of a valid descriptor must never crash; they either parse or
// fail with a descriptor status and a message.
TEST(Descriptor, RandomMutationsNeverCrash) {
  std::mt19937 rng(1234);
  const char alphabet[] = "-0123456789 \n\tabcdefgimnoprtuxy.\xff";
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text = kMlp;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      size_t pos = rng() % text.size();
      switch (rng() % 3) {
      case 0:
        text[pos] = alphabet[rng() % (sizeof(alphabet) - 1)];
        break;
      case 1:
        text.erase(pos, 1 + rng() % 8);
        break;
      default:
        text.insert(pos, 1, alphabet[rng() % (sizeof(alphabet) - 1)]);
      }
    }
    grove_model_def model = modelFor("mlp", text, 1);
    grove_context *ctx = nullptr;
    grove_status s = grove_context_create(&model, &ctx);
    if (s == GROVE_OK) {
      ASSERT_NE(ctx, nullptr);
      grove_context_destroy(ctx);
    } else {
      ASSERT_TRUE(s == GROVE_ERROR_INVALID_ARGUMENT ||
                  s == GROVE_ERROR_ABI_MISMATCH)
          << grove_status_string(s);
      ASSERT_NE(std::string(grove_last_error()), "");
      ASSERT_EQ(ctx, nullptr);
    }
  }
}

TEST(Runtime, VersionAndStatusStrings) {
  EXPECT_STREQ(grove_runtime_version(), "0.1.0");
  EXPECT_STREQ(grove_status_string(GROVE_OK), "GROVE_OK");
  EXPECT_STREQ(grove_status_string(GROVE_ERROR_BAD_WEIGHTS),
               "GROVE_ERROR_BAD_WEIGHTS");
  EXPECT_STREQ(grove_status_string(GROVE_ERROR_INTERNAL),
               "GROVE_ERROR_INTERNAL");
  // 15 is outside the enumerators but inside the enum's value range.
  EXPECT_STREQ(grove_status_string(static_cast<grove_status>(15)),
               "GROVE_ERROR_UNKNOWN");
  EXPECT_NE(grove_last_error(), nullptr);
}

} // namespace

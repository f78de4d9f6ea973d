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

/// A descriptor of module `m` whose "state" and "entries" arrays hold
/// `state` and `entries` (JSON text).
std::string doc(const std::string &state, const std::string &entries,
                const std::string &target = "host") {
  return R"({"format":"grove-model","version":7,"module":"m","target":")" +
         target + R"(","state":[)" + state + R"(],"entries":[)" + entries +
         "]}\n";
}

/// `{"name":N,"dtype":T,"shape":[S]}` with `extra` before the brace.
std::string tensor(const std::string &name, const std::string &dtype,
                   const std::string &shape, const std::string &extra = "") {
  return R"({"name":")" + name + R"(","dtype":")" + dtype + R"(","shape":[)" +
         shape + "]" + extra + "}";
}

/// An entry `f` over `inputs` (handed in order, after `stateArgs`).
std::string entry(const std::string &inputs, size_t numInputs,
                  const std::string &stateArgs = "",
                  const std::string &outputs = "",
                  const std::string &name = "f") {
  std::string args = stateArgs;
  for (size_t i = 0; i < numInputs; ++i)
    args += (args.empty() ? "" : ",") + std::string(R"({"input":)") +
            std::to_string(i) + "}";
  return R"({"name":")" + name + R"(","args":[)" + args + R"(],"inputs":[)" +
         inputs + R"(],"outputs":[)" + outputs + "]}";
}

const std::string kMlp =
    R"({"format":"grove-model","version":7,"module":"mlp","target":"host",
"state":[
{"name":"fc1.weight","dtype":"f32","shape":[128,64]},
{"name":"fc1.bias","dtype":"f32","shape":[128]}],
"entries":[
{"name":"forward","args":[{"input":0}],
"inputs":[{"name":"x","dtype":"f32","shape":[-1,64]}],
"outputs":[{"name":"out0","dtype":"f32","shape":[-1,10]}]}]}
)";

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
  std::string text =
      doc(tensor("a", "f32", "") + "," + tensor("b", "f16", "2") + "," +
              tensor("c", "bf16", "2") + "," + tensor("d", "f64", "2") + "," +
              tensor("e", "i8", "2") + "," + tensor("f", "i16", "2") + "," +
              tensor("g", "i32", "2") + "," + tensor("h", "i64", "2") + "," +
              tensor("i", "i1", "2"),
          "");
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

TEST(Descriptor, EntriesWithoutInputsOrOutputs) {
  std::string text = doc(tensor("p", "i64", "0,3"),
                         entry("", 0, "", "", "a") + "," +
                             entry("", 0, "", tensor("o", "i1", "-1"), "b"));
  grove_model_def model = modelFor("m", text, 2);
  ContextPtr c;
  ASSERT_GROVE_OK(grove_context_create(&model, &c.ctx));
  EXPECT_EQ(grove_context_num_entries(c.ctx), 2u);
  EXPECT_EQ(grove_context_num_params(c.ctx), 1u);
}

TEST(Descriptor, NoParamsNoEntries) {
  std::string text = doc("", "");
  grove_model_def model = {GROVE_ABI_VERSION, 0, "m", text.c_str(), nullptr};
  ContextPtr c;
  ASSERT_GROVE_OK(grove_context_create(&model, &c.ctx));
  EXPECT_EQ(grove_context_weights_ready(c.ctx), 1); // nothing to load
}

// State kinds and access: initialised state, and entries that read and
// write it, in argument order.
TEST(Descriptor, StateKindsAndAccess) {
  std::string text = doc(
      tensor("w", "f32", "4") + "," +
          tensor("m", "f32", "4", R"(,"init":"0x3f800000")"),
      R"({"name":"step","args":[{"state":"m","access":"write"},{"input":0},)"
      R"({"state":"w","access":"read"}],"inputs":[)" +
          tensor("x", "f32", "-1") +
          R"(],"outputs":[]},)"
          R"({"name":"look","args":[{"state":"m","access":"read"}],)"
          R"("inputs":[],"outputs":[]})");
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
  std::string text =
      doc(tensor("s", "f32", "3", R"(,"init":"0x40490fdb")") + "," +
              tensor("k", "i16", "2", R"(,"init":"0xfffe")"),
          "");
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
  std::string text = doc(tensor("caf\xc3\xa9", "f32", "1"), "");
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

const char kEmbeddedNul[] =
    "{\"format\":\"grove-model\",\"version\":7,\0\"module\":\"m\"}\n";

std::string repeat(const std::string &s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += (i ? "," : "") + s;
  return out;
}
const grove_status INV = GROVE_ERROR_INVALID_ARGUMENT;
const grove_status ABI = GROVE_ERROR_ABI_MISMATCH;
const std::string kHeader = R"({"format":"grove-model","version":7,)";
const std::string kRest = R"("module":"m","target":"host","state":[],)"
                          R"("entries":[]})";
const std::string kW = tensor("w", "f32", "");
/// An entry over input `x` with `extra` preconditions etc. in its tensor.
std::string inputs(const std::string &x) { return entry(x, 1); }
/// An entry over a forest: offsets `o` of `dtype` carrying the
/// preconditions `pre` (JSON objects), children `c` and roots `r`.
std::string forestEntry(const std::string &dtype, const std::string &pre) {
  return entry(tensor("o", dtype, "-1", R"(,"preconditions":[)" + pre + "]") +
                   "," + tensor("c", "i32", "-1") + "," +
                   tensor("r", "i32", "-1"),
               3);
}
const std::string kForest =
    R"({"kind":"forest","children":1,"roots":2,"arity":0})";

INSTANTIATE_TEST_SUITE_P(
    Runtime, MalformedDescriptor,
    ::testing::Values(
        BadDescriptor{"Empty", "", 0, INV, "not valid JSON"},
        BadDescriptor{"NotJson", "hello\n", 0, INV, "not valid JSON"},
        BadDescriptor{"TrailingGarbage", doc("", "") + "x", 0, INV,
                      "not valid JSON"},
        BadDescriptor{"NotAnObject", "[1,2]", 0, INV, "expected a JSON object"},
        BadDescriptor{"TextDescriptor", "grove-model 5\nmodule m\n", 0, ABI,
                      "text model descriptor"},
        BadDescriptor{"FutureVersion",
                      R"({"format":"grove-model","version":8,)" + kRest, 0, ABI,
                      "version 8"},
        BadDescriptor{"PastVersion",
                      R"({"format":"grove-model","version":6,)" + kRest, 0, ABI,
                      "version 6"},
        BadDescriptor{"VersionNotNumber",
                      R"({"format":"grove-model","version":"6",)" + kRest, 0,
                      INV, "version"},
        BadDescriptor{"WrongFormat",
                      R"({"format":"grove","version":7,)" + kRest, 0, INV,
                      "grove-model"},
        BadDescriptor{"MissingModule",
                      kHeader + R"("target":"host","state":[],"entries":[]})",
                      0, INV, "missing \"module\""},
        BadDescriptor{"ModuleNotString",
                      kHeader + R"("module":5,"target":"host","state":[],)"
                                R"("entries":[]})",
                      0, INV, "module: expected a string"},
        BadDescriptor{"UnknownKey", kHeader + R"("extra":1,)" + kRest, 0, INV,
                      "unknown key \"extra\""},
        BadDescriptor{"NestsTooDeep",
                      std::string(64, '[') + std::string(64, ']'), 0, INV,
                      "nests deeper"},
        BadDescriptor{"UnknownTarget", doc("", "", "tpu"), 0, INV,
                      "\"host\" or \"cuda\""},
        BadDescriptor{"StateDynamicDim", doc(tensor("a", "f32", "-1"), ""), 0,
                      INV, "state[0].shape[0]: expected a size >= 0 (state"},
        BadDescriptor{"RankAboveLimit",
                      doc(tensor("a", "f32", repeat("1", 65)), ""), 0, INV,
                      "at most 64"},
        BadDescriptor{"UnknownDType", doc(tensor("a", "f128", "2"), ""), 0, INV,
                      "f128"},
        BadDescriptor{"UpperCaseDType", doc(tensor("a", "F32", "2"), ""), 0,
                      INV, "F32"},
        BadDescriptor{"DimNotNumber", doc(tensor("a", "f32", "\"two\""), ""), 0,
                      INV, "expected a size"},
        BadDescriptor{"DimNotInteger", doc(tensor("a", "f32", "2.5"), ""), 0,
                      INV, "expected a size"},
        BadDescriptor{"DimOverflow",
                      doc(tensor("a", "f32", "9223372036854775808"), ""), 0,
                      INV, "expected a size"},
        BadDescriptor{
            "ParamBytesOverflow",
            doc(tensor("a", "f64", "4294967296,4294967296,4294967296"), ""), 0,
            INV, "too large"},
        BadDescriptor{
            "DuplicateParam",
            doc(tensor("a", "f32", "") + "," + tensor("a", "f32", ""), ""), 0,
            INV, "duplicate name 'a'"},
        BadDescriptor{"InputDimBelowMinusOne",
                      doc("", inputs(tensor("x", "f32", "-2"))), 1, INV,
                      "expected a size >= 0, or -1"},
        BadDescriptor{"InputOutOfOrder",
                      doc("", R"({"name":"f","args":[{"input":1},{"input":0}],)"
                              R"("inputs":[)" +
                                  tensor("x", "f32", "") + "," +
                                  tensor("y", "f32", "") +
                                  R"(],"outputs":[]})"),
                      1, INV, "out of order"},
        BadDescriptor{"InputNotHanded",
                      doc("", entry(tensor("x", "f32", ""), 0)), 1, INV,
                      "declares 1 inputs but hands 0"},
        BadDescriptor{"StateInitTooWide",
                      doc(tensor("s", "i8", "2", R"(,"init":"0x100")"), ""), 0,
                      INV, "at most 8 bits"},
        BadDescriptor{"StateInitNotHex",
                      doc(tensor("s", "f32", "", R"(,"init":"12")"), ""), 0,
                      INV, "hex digits"},
        BadDescriptor{"StateInitUpperHex",
                      doc(tensor("s", "f32", "", R"(,"init":"0xAB")"), ""), 0,
                      INV, "hex digits"},
        BadDescriptor{"StateInitNumber",
                      doc(tensor("s", "f32", "", R"(,"init":5)"), ""), 0, INV,
                      "hex digits"},
        BadDescriptor{"ReservedParamName",
                      doc(tensor("__metadata__", "f32", ""), ""), 0, INV,
                      "reserved"},
        BadDescriptor{
            "ReadUndeclared",
            doc("", entry("", 0, R"({"state":"nope","access":"read"})")), 1,
            INV, "undeclared state 'nope'"},
        BadDescriptor{"WriteTwice",
                      doc(kW, entry("", 0,
                                    R"({"state":"w","access":"read"},)"
                                    R"({"state":"w","access":"write"})")),
                      1, INV, "twice"},
        BadDescriptor{
            "UnknownAccess",
            doc(kW, entry("", 0, R"({"state":"w","access":"modify"})")), 1, INV,
            "\"read\" or \"write\""},
        BadDescriptor{"DuplicateEntry",
                      doc("", entry("", 0) + "," + entry("", 0)), 2, INV,
                      "duplicate entry"},
        BadDescriptor{
            "DuplicateInput",
            doc("", entry(tensor("x", "f32", "") + "," + tensor("x", "f32", ""),
                          2)),
            1, INV, "duplicate name 'x'"},
        BadDescriptor{"EntryCountMismatch", doc("", entry("", 0)), 3, INV,
                      "num_entries"},
        BadDescriptor{"InvalidUtf8Name", doc(tensor("a\xff", "f32", ""), ""), 0,
                      INV, "JSON"},
        BadDescriptor{"ControlCharName", doc(tensor("a\\u0001", "f32", ""), ""),
                      0, INV, "invalid name"},
        BadDescriptor{"SpaceInName", doc(tensor("a b", "f32", ""), ""), 0, INV,
                      "invalid name"},
        BadDescriptor{"EmbeddedNul",
                      std::string(kEmbeddedNul, sizeof(kEmbeddedNul) - 1), 0,
                      INV, "not valid JSON"},
        BadDescriptor{"UnknownPrecondition",
                      doc("", inputs(tensor("x", "i32", "-1",
                                            R"(,"preconditions":[{"kind":)"
                                            R"("sorted"}])"))),
                      1, INV, "unknown precondition kind \"sorted\""},
        BadDescriptor{"BelowOnFloats",
                      doc("", inputs(tensor("x", "f32", "-1",
                                            R"(,"preconditions":[{"kind":)"
                                            R"("below","bound":3}])"))),
                      1, INV, "integer dtype"},
        BadDescriptor{"BelowZero",
                      doc("", inputs(tensor("x", "i32", "-1",
                                            R"(,"preconditions":[{"kind":)"
                                            R"("below","bound":0}])"))),
                      1, INV, "bound: expected an integer in [1"},
        BadDescriptor{
            "TwoBounds",
            doc("",
                inputs(tensor("x", "i32", "-1",
                              R"(,"preconditions":[{"kind":"below",)"
                              R"("bound":3},{"kind":"below","bound":4}])"))),
            1, INV, "two 'below' preconditions"},
        BadDescriptor{
            "EqualDimOfItself",
            doc("", inputs(tensor("x", "f32", "-1,-1",
                                  R"(,"preconditions":[{"kind":"equal_dim",)"
                                  R"("dim":1,"input":0,"input_dim":0}])"))),
            1, INV, "earlier input"},
        BadDescriptor{"EqualDimStatic",
                      doc("", entry(tensor("x", "f32", "-1") + "," +
                                        tensor("y", "f32", "3",
                                               R"(,"preconditions":[{"kind":)"
                                               R"("equal_dim","dim":0,)"
                                               R"("input":0,"input_dim":0}])"),
                                    2)),
                      1, INV, "not a dynamic dimension"},
        BadDescriptor{"ForestOfFloats", doc("", forestEntry("f32", kForest)), 1,
                      INV, "three distinct i32 inputs"},
        BadDescriptor{"NodesWithoutForest",
                      doc("", entry(tensor("o", "i32", "-1") + "," +
                                        tensor("t", "f32", "-1,4",
                                               R"(,"preconditions":[{"kind":)"
                                               R"("forest_nodes","offsets":)"
                                               R"(0}])"),
                                    2)),
                      1, INV, "forest precondition"},
        BadDescriptor{"DuplicateKey",
                      R"({"format":"grove-model","version":7,"version":7,)" +
                          kRest,
                      0, INV, "key \"version\" appears twice"},
        BadDescriptor{"DuplicateKeyInState",
                      doc(R"({"name":"a","dtype":"f32","dtype":"i8",)"
                          R"("shape":[]})",
                          ""),
                      0, INV, "key \"dtype\" appears twice"},
        BadDescriptor{"BoolInitNotZeroOrOne",
                      doc(tensor("b", "i1", "2", R"(,"init":"0x02")"), ""), 0,
                      INV, "at most 1 bits"},
        BadDescriptor{"ArityTooLarge",
                      doc("", forestEntry("i32", R"({"kind":"forest",)"
                                                 R"("children":1,"roots":2,)"
                                                 R"("arity":4294967296})")),
                      1, INV, "arity: expected an integer in [0, 2147483647]"},
        BadDescriptor{
            "NodesOfItself",
            doc("", forestEntry("i32", kForest + R"(,{"kind":"forest_nodes",)"
                                                 R"("offsets":0})")),
            1, INV, "another input with a forest precondition"},
        BadDescriptor{
            "PreconditionOnOutput",
            doc("", entry("", 0, "",
                          tensor("y", "i32", "-1", R"(,"preconditions":[])"))),
            1, INV, "unknown key \"preconditions\""}),
    [](const ::testing::TestParamInfo<BadDescriptor> &info) {
      return std::string(info.param.label);
    });

// Random edits of a valid descriptor must never crash; they either parse or
// fail with a descriptor status and a message.
TEST(Descriptor, RandomMutationsNeverCrash) {
  std::mt19937 rng(1234);
  const char alphabet[] = "-0123456789 \n\tabcdefgimnoprtuxy.\xff{}[]:,\"\\";
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

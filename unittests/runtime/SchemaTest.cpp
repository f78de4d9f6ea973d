//===- SchemaTest.cpp - The descriptor's one definition -------------------===//
//
// grove/ModelSchema.h writes the descriptor for the compiler and reads it
// for the runtime and grovec: what it prints it must read back equal, and
// its validator is the one both sides trust.
//
//===----------------------------------------------------------------------===//

#include "grove/ModelSchema.h"

#include <gtest/gtest.h>

#include <tuple>

using namespace grove::schema;

namespace {

bool equal(const TensorDesc &a, const TensorDesc &b) {
  return a.name == b.name && a.dtype.code == b.dtype.code &&
         a.dtype.bits == b.dtype.bits && a.shape == b.shape &&
         a.preconditions == b.preconditions;
}

TEST(Schema, PrintParseRoundTrip) {
  ModelDesc model;
  model.module = "m";
  model.target = "cuda";
  StateDesc w;
  w.name = "w";
  w.dtype = {kDLFloat, 32, 1};
  w.shape = {2, 3};
  StateDesc step;
  step.name = "step";
  step.dtype = {kDLInt, 64, 1};
  step.kind = StateKind::Initialized;
  step.initBits = 0xfffffffffffffffdull;
  StateDesc flag;
  flag.name = "flag";
  flag.dtype = {kDLBoolCode, 8, 1};
  flag.shape = {4};
  flag.kind = StateKind::Initialized;
  flag.initBits = 1;
  model.params = {w, step, flag};
  EntryDesc e;
  e.name = "train";
  e.inputs.push_back({"x", {kDLBfloat, 16, 1}, {-1, 3}, {}});
  e.inputs.push_back({"labels",
                      {kDLInt, 32, 1},
                      {-1},
                      {BoundPrecondition{10}, EqualDimPrecondition{0, 0, 0}}});
  e.outputs.push_back({"loss", {kDLFloat, 32, 1}, {}, {}});
  e.args = {{true, 1, Access::Write},
            {false, 0, Access::Read},
            {false, 1, Access::Read},
            {true, 0, Access::Read}};
  model.entries = {e};

  std::string text = printModelDescriptor(model);
  EXPECT_EQ(text,
            R"({"format":"grove-model","version":7,"module":"m","target":"cuda",
"state":[
{"name":"w","dtype":"f32","shape":[2,3]},
{"name":"step","dtype":"i64","shape":[],"init":"0xfffffffffffffffd"},
{"name":"flag","dtype":"i1","shape":[4],"init":"0x01"}],
"entries":[
{"name":"train","args":[
{"state":"step","access":"write"},
{"input":0},
{"input":1},
{"state":"w","access":"read"}],
"inputs":[
{"name":"x","dtype":"bf16","shape":[-1,3]},
{"name":"labels","dtype":"i32","shape":[-1],"preconditions":[{"kind":"below","bound":10},{"kind":"equal_dim","dim":0,"input":0,"input_dim":0}]}],
"outputs":[
{"name":"loss","dtype":"f32","shape":[]}]}]}
)");
  ModelDesc back;
  ParseResult r = parseModelDescriptor(text, back);
  ASSERT_FALSE(r) << r.message;
  EXPECT_EQ(back.module, "m");
  EXPECT_EQ(back.target, "cuda");
  ASSERT_EQ(back.params.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(equal(back.params[i], model.params[i])) << i;
    EXPECT_EQ(back.params[i].kind, model.params[i].kind) << i;
    EXPECT_EQ(back.params[i].initBits, model.params[i].initBits) << i;
  }
  ASSERT_EQ(back.entries.size(), 1u);
  const EntryDesc &b = back.entries[0];
  ASSERT_EQ(b.args.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(b.args[i].isState, e.args[i].isState) << i;
    EXPECT_EQ(b.args[i].index, e.args[i].index) << i;
    EXPECT_EQ(b.args[i].access, e.args[i].access) << i;
  }
  EXPECT_TRUE(b.writesState());
  EXPECT_TRUE(equal(b.inputs[0], e.inputs[0]));
  EXPECT_TRUE(equal(b.inputs[1], e.inputs[1]));
  EXPECT_TRUE(equal(b.outputs[0], e.outputs[0]));
}

TEST(Schema, CollectivesRoundTrip) {
  ModelDesc model;
  model.module = "m";
  EntryDesc e;
  e.name = "step";
  e.collectives.config = "grove-insert-collectives{compressor=fp16}";
  e.collectives.ops = {"all_reduce mean tensor<8xf16>",
                       "all_gather tensor<\"q\">"};
  model.entries = {e};
  std::string text = printModelDescriptor(model);
  EXPECT_NE(text.find(R"("collectives":{"config":"grove-insert-collectives)"
                      R"({compressor=fp16}","ops":[)"),
            std::string::npos)
      << text;
  ModelDesc back;
  ParseResult r = parseModelDescriptor(text, back);
  ASSERT_FALSE(r) << r.message;
  EXPECT_TRUE(back.entries[0].collectives == e.collectives);
  // An entry without collectives prints no key.
  model.entries[0].collectives = {};
  EXPECT_EQ(printModelDescriptor(model).find("collectives"), std::string::npos);
}

TEST(Schema, CollectivesAreChecked) {
  auto parse = [](const std::string &collectives) {
    ModelDesc out;
    return parseModelDescriptor(
        R"({"format":"grove-model","version":7,"module":"m","target":"host",)"
        R"("state":[],"entries":[{"name":"f","args":[],"inputs":[],)"
        R"("outputs":[],"collectives":)" +
            collectives + "}]}",
        out);
  };
  EXPECT_FALSE(parse(R"({"config":"","ops":["all_reduce"]})"));
  for (const char *bad :
       {R"({"config":"","ops":[]})", R"({"config":"","ops":[3]})",
        R"({"config":"x"})", R"({"config":"x","ops":[],"more":1})",
        R"("all_reduce")"}) {
    ParseResult r = parse(bad);
    EXPECT_EQ(r.status, ParseStatus::Invalid) << bad;
    EXPECT_EQ(r.where.rfind("entries[0].collectives", 0), 0u)
        << bad << ": " << r.where;
  }
}

TEST(Schema, ErrorsCarryTheirPath) {
  ModelDesc out;
  ParseResult r = parseModelDescriptor(
      R"({"format":"grove-model","version":7,"module":"m","target":"host",)"
      R"("state":[{"name":"w","dtype":"f99","shape":[]}],"entries":[]})",
      out);
  EXPECT_EQ(r.status, ParseStatus::Invalid);
  EXPECT_EQ(r.where, "state[0].dtype");
  EXPECT_NE(r.message.find("f99"), std::string::npos);
  r = parseModelDescriptor(R"({"format":"grove-model","version":8})", out);
  EXPECT_EQ(r.status, ParseStatus::VersionMismatch);
  r = parseModelDescriptor("grove-model 5\nmodule m\n", out);
  EXPECT_EQ(r.status, ParseStatus::VersionMismatch);
}

/// An entry `f` over `inputs`, handed in order, checked by validateModel.
ParseResult validateInputs(std::vector<TensorDesc> inputs) {
  ModelDesc model;
  model.module = "m";
  EntryDesc e;
  e.name = "f";
  for (size_t i = 0; i < inputs.size(); ++i)
    e.args.push_back({false, i, Access::Read});
  e.inputs = std::move(inputs);
  model.entries = {e};
  return validateModel(model);
}

TensorDesc input(const char *name, DLDataType type, std::vector<int64_t> shape,
                 std::vector<Precondition> pre = {}) {
  return {name, type, std::move(shape), std::move(pre)};
}

constexpr DLDataType kI32 = {kDLInt, 32, 1}, kF32 = {kDLFloat, 32, 1};

// `below` bounds integer inputs only, by a bound >= 1, once.
TEST(Schema, InputBounds) {
  EXPECT_FALSE(validateInputs(
      {input("y", {kDLInt, 64, 1}, {-1}, {BoundPrecondition{3}})}));
  ParseResult r =
      validateInputs({input("y", kF32, {-1}, {BoundPrecondition{3}})});
  EXPECT_NE(r.message.find("integer dtype"), std::string::npos) << r.message;
  r = validateInputs({input("y", kI32, {-1}, {BoundPrecondition{0}})});
  EXPECT_NE(r.message.find("bound >= 1"), std::string::npos) << r.message;
  r = validateInputs(
      {input("y", kI32, {-1}, {BoundPrecondition{3}, BoundPrecondition{4}})});
  EXPECT_NE(r.message.find("two 'below'"), std::string::npos) << r.message;
  EXPECT_EQ(r.where, "entries[0].inputs[0].preconditions[1]");
}

// `equal_dim`: this input's dynamic dimension is a dynamic dimension of an
// earlier input; any number of them, and they round-trip.
TEST(Schema, InputEqualities) {
  TensorDesc x = input("x", kF32, {-1, -1});
  auto y = [&](std::vector<Precondition> pre) {
    return input("y", kI32, {-1, -1}, std::move(pre));
  };
  EXPECT_FALSE(validateInputs(
      {x, y({BoundPrecondition{10}, EqualDimPrecondition{0, 0, 0},
             EqualDimPrecondition{1, 0, 1}})}));
  for (EqualDimPrecondition bad :
       {EqualDimPrecondition{2, 0, 0}, EqualDimPrecondition{0, 1, 0},
        EqualDimPrecondition{0, 0, 2}, EqualDimPrecondition{0, -1, 0}}) {
    ParseResult r = validateInputs({x, y({bad})});
    EXPECT_EQ(r.status, ParseStatus::Invalid) << bad.dim << bad.input;
  }
  ParseResult r =
      validateInputs({input("x", kF32, {3}),
                      input("y", kF32, {-1}, {EqualDimPrecondition{0, 0, 0}})});
  EXPECT_NE(r.message.find("no dynamic dimension of an earlier input"),
            std::string::npos)
      << r.message;
  r = validateInputs(
      {x, input("y", kF32, {4}, {EqualDimPrecondition{0, 0, 0}})});
  EXPECT_NE(r.message.find("not a dynamic dimension"), std::string::npos)
      << r.message;
}

// `forest` on a forest's offsets names its children and roots inputs (any
// order) and its arity; `forest_nodes` an input with a row per node.
TEST(Schema, Forests) {
  auto check = [](std::vector<Precondition> offsets, DLDataType offsetType,
                  std::vector<int64_t> tokenShape,
                  std::vector<Precondition> tokens) {
    return validateInputs({input("offsets", offsetType, {-1}, offsets),
                           input("children", kI32, {-1}),
                           input("roots", kI32, {-1}),
                           input("tokens", kI32, tokenShape, tokens)});
  };
  ParseResult ok = check({ForestPrecondition{1, 2, 2}}, kI32, {-1},
                         {BoundPrecondition{9}, ForestNodesPrecondition{0}});
  EXPECT_FALSE(ok) << ok.message;
  for (auto [offsets, type, shape, tokens, needle] :
       std::vector<std::tuple<std::vector<Precondition>, DLDataType,
                              std::vector<int64_t>, std::vector<Precondition>,
                              std::string>>{
           {{ForestPrecondition{1, 2, -1}}, kI32, {-1}, {}, "three distinct"},
           {{ForestPrecondition{1, 1, 0}}, kI32, {-1}, {}, "three distinct"},
           {{ForestPrecondition{1, 7, 0}}, kI32, {-1}, {}, "three distinct"},
           {{ForestPrecondition{1, 2, 0}},
            {kDLInt, 64, 1},
            {-1},
            {},
            "three distinct"},
           {{},
            kI32,
            {-1},
            {ForestNodesPrecondition{0}},
            "forest precondition"},
           {{ForestPrecondition{1, 2, int64_t(1) << 31}},
            kI32,
            {-1},
            {},
            "three distinct"},
           {{ForestPrecondition{1, 2, 0}},
            kI32,
            {4},
            {ForestNodesPrecondition{0}},
            "dynamic dimension 0"}}) {
    ParseResult r = check(offsets, type, shape, tokens);
    EXPECT_EQ(r.status, ParseStatus::Invalid) << needle;
    EXPECT_NE(r.message.find(needle), std::string::npos) << r.message;
  }
}

// Every kind survives print and parse, in order.
TEST(Schema, PreconditionsRoundTrip) {
  ModelDesc model;
  model.module = "m";
  EntryDesc e;
  e.name = "f";
  e.inputs = {input("offsets", kI32, {-1}, {ForestPrecondition{1, 2, 3}}),
              input("children", kI32, {-1}), input("roots", kI32, {-1}),
              input("tokens", kI32, {-1, -1},
                    {ForestNodesPrecondition{0}, BoundPrecondition{7},
                     EqualDimPrecondition{1, 0, 0}})};
  for (size_t i = 0; i < e.inputs.size(); ++i)
    e.args.push_back({false, i, Access::Read});
  model.entries = {e};
  ASSERT_FALSE(validateModel(model));
  ModelDesc back;
  ParseResult r = parseModelDescriptor(printModelDescriptor(model), back);
  ASSERT_FALSE(r) << r.where << ": " << r.message;
  ASSERT_EQ(back.entries.size(), 1u);
  for (size_t i = 0; i < e.inputs.size(); ++i)
    EXPECT_TRUE(equal(back.entries[0].inputs[i], e.inputs[i])) << i;
  EXPECT_STREQ(preconditionKind(e.inputs[3].preconditions[0]), "forest_nodes");
  EXPECT_EQ(e.inputs[3].find<BoundPrecondition>()->bound, 7);
}

TEST(Schema, NamesAndTokens) {
  EXPECT_TRUE(isValidName("fc1.weight"));
  EXPECT_TRUE(isValidName("caf\xc3\xa9"));
  EXPECT_FALSE(isValidName("a b"));
  EXPECT_FALSE(isValidName(""));
  EXPECT_FALSE(isValidName("a\xff"));
  EXPECT_TRUE(isReservedStateName("__metadata__"));
  EXPECT_FALSE(isReservedStateName("metadata"));
  DLDataType t;
  ASSERT_TRUE(dtypeFromToken("bf16", t));
  EXPECT_STREQ(dtypeToken(t), "bf16");
  EXPECT_FALSE(dtypeFromToken("F32", t));
}

} // namespace

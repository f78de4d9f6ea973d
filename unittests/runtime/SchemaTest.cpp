//===- SchemaTest.cpp - The descriptor's one definition -------------------===//
//
// runtime/src/schema writes the descriptor for the compiler and reads it
// for the runtime and grovec: what it prints it must read back equal.
//
//===----------------------------------------------------------------------===//

#include "ModelSchema.h"

#include <gtest/gtest.h>

#include <tuple>

using namespace grove::schema;

namespace {

bool equal(const TensorDesc &a, const TensorDesc &b) {
  return a.name == b.name && a.dtype.code == b.dtype.code &&
         a.dtype.bits == b.dtype.bits && a.shape == b.shape &&
         a.below == b.below;
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
  e.inputs.push_back({"x", {kDLBfloat, 16, 1}, {-1, 3}, 0, {}});
  e.inputs.push_back({"labels", {kDLInt, 32, 1}, {-1}, 10, {{0, 0, 0}}});
  e.outputs.push_back({"loss", {kDLFloat, 32, 1}, {}, 0, {}});
  e.args = {{true, 1, Access::Write},
            {false, 0, Access::Read},
            {false, 1, Access::Read},
            {true, 0, Access::Read}};
  model.entries = {e};

  std::string text = printModelDescriptor(model);
  EXPECT_EQ(text, "grove-model 5\nmodule m\ntarget cuda\n"
                  "param w f32 2 2 3\n"
                  "state step i64 0 init 0xfffffffffffffffd\n"
                  "state flag i1 1 4 init 0x01\n"
                  "entry train 4 1\nwrite step\ninput x bf16 2 -1 3\n"
                  "input labels i32 1 -1 below 10 equal 0 0 0\nread w\n"
                  "output loss f32 0\n");
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

TEST(Schema, ErrorsCarryTheirLine) {
  ModelDesc out;
  ParseResult r =
      parseModelDescriptor("grove-model 5\nmodule m\nparam w f99 0\n", out);
  EXPECT_EQ(r.status, ParseStatus::Invalid);
  EXPECT_EQ(r.line, 3u);
  EXPECT_NE(r.message.find("f99"), std::string::npos);
  r = parseModelDescriptor("grove-model 7\nmodule m\n", out);
  EXPECT_EQ(r.status, ParseStatus::VersionMismatch);
}

// `below N` bounds integer inputs only, by N >= 1.
TEST(Schema, InputBounds) {
  auto parse = [](const std::string &input) {
    ModelDesc out;
    return parseModelDescriptor(
        "grove-model 5\nmodule m\nentry f 1 0\n" + input + "\n", out);
  };
  EXPECT_FALSE(parse("input y i64 1 -1 below 3"));
  ParseResult r = parse("input y f32 1 -1 below 3");
  EXPECT_NE(r.message.find("not of an integer dtype"), std::string::npos)
      << r.message;
  r = parse("input y i32 1 -1 below 0");
  EXPECT_NE(r.message.find("N >= 1, got '0'"), std::string::npos) << r.message;
  r = parse("input y i32 1 -1 above 3");
  EXPECT_EQ(r.status, ParseStatus::Invalid);
}

// `equal D I E`: this input's dynamic dimension D is dimension E of the
// earlier input I; clauses follow `below` in any number, and round-trip.
TEST(Schema, InputEqualities) {
  auto parse = [](const std::string &inputs, ModelDesc &out) {
    return parseModelDescriptor("grove-model 5\nmodule m\nentry f 2 0\n"
                                "input x f32 2 -1 -1\n" +
                                    inputs + "\n",
                                out);
  };
  ModelDesc out;
  ASSERT_FALSE(
      parse("input y i32 2 -1 -1 below 10 equal 0 0 0 equal 1 0 1", out));
  const std::vector<DimEquality> &eq = out.entries[0].inputs[1].equalDims;
  ASSERT_EQ(eq.size(), 2u);
  EXPECT_EQ(eq[0], (DimEquality{0, 0, 0}));
  EXPECT_EQ(eq[1], (DimEquality{1, 0, 1}));
  EXPECT_EQ(out.entries[0].inputs[1].below, 10);
  ModelDesc again;
  ASSERT_FALSE(parseModelDescriptor(printModelDescriptor(out), again));
  EXPECT_EQ(again.entries[0].inputs[1].equalDims, eq);

  // Only dynamic dimensions, of this input and of an earlier one.
  for (const char *bad :
       {"input y f32 1 4 equal 0 0 0", "input y f32 1 -1 equal 1 0 0",
        "input y f32 1 -1 equal 0 1 0", "input y f32 1 -1 equal 0 0 2",
        "input y f32 1 -1 equal 0 0", "input y f32 1 -1 equal 0 -1 0"}) {
    ParseResult r = parse(bad, out);
    EXPECT_EQ(r.status, ParseStatus::Invalid) << bad;
    EXPECT_EQ(r.line, 5u) << bad;
  }
  ModelDesc staticFirst;
  ParseResult r = parseModelDescriptor(
      "grove-model 5\nmodule m\nentry f 2 0\ninput x f32 1 3\n"
      "input y f32 1 -1 equal 0 0 0\n",
      staticFirst);
  EXPECT_NE(r.message.find("no dynamic dimension of an earlier input"),
            std::string::npos)
      << r.message;
}

// `forest C R A` on a forest's offsets names its children and roots inputs
// (any order) and its arity; `nodes O` an input with a row per node.
TEST(Schema, Forests) {
  auto parse = [](const std::string &offsets, const std::string &tokens,
                  ModelDesc &out) {
    return parseModelDescriptor("grove-model 5\nmodule m\nentry f 4 0\n" +
                                    offsets +
                                    "\ninput children i32 1 -1\n"
                                    "input roots i32 1 -1\n" +
                                    tokens + "\n",
                                out);
  };
  ModelDesc out;
  ASSERT_FALSE(parse("input offsets i32 1 -1 forest 1 2 2",
                     "input tokens i32 1 -1 below 9 nodes 0", out));
  const TensorDesc &off = out.entries[0].inputs[0];
  EXPECT_TRUE(off.isForest());
  EXPECT_EQ(off.forestChildren, 1);
  EXPECT_EQ(off.forestRoots, 2);
  EXPECT_EQ(off.forestArity, 2);
  EXPECT_EQ(out.entries[0].inputs[3].nodesOf, 0);
  ModelDesc again;
  ASSERT_FALSE(parseModelDescriptor(printModelDescriptor(out), again));
  EXPECT_EQ(printModelDescriptor(again), printModelDescriptor(out));

  const char *ok = "input tokens i32 1 -1";
  for (auto [offsets, tokens, needle] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"input offsets i32 1 -1 forest 1 2", ok, "forest CHILDREN"},
           {"input offsets i32 1 -1 forest 1 2 -1", ok, "arity >= 0"},
           {"input offsets i32 1 -1 forest 1 1 0", ok, "three distinct"},
           {"input offsets i32 1 -1 forest 1 7 0", ok, "three distinct"},
           {"input offsets i64 1 -1 forest 1 2 0", ok, "three distinct"},
           {"input offsets i32 1 -1 forest 1 3 0", "input tokens f32 1 -1",
            "three distinct"},
           {"input offsets i32 1 -1", "input tokens i32 1 -1 nodes 0",
            "a forest clause"},
           {"input offsets i32 1 -1 forest 1 2 0",
            "input tokens i32 1 4 nodes 0", "dynamic dimension 0"}}) {
    ParseResult r = parse(offsets, tokens, out);
    EXPECT_EQ(r.status, ParseStatus::Invalid) << offsets << " / " << tokens;
    EXPECT_NE(r.message.find(needle), std::string::npos) << r.message;
  }
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

//===- SafetensorsTest.cpp - Loading weights from safetensors -------------===//
//
// Every hostile file must be rejected with the right status and a message,
// from memory and from disk, and must leave the context untouched.
//
//===----------------------------------------------------------------------===//

#include "TestModels.h"
#include "TestUtil.h"

#include <cstring>
#include <random>

using namespace grove::test;

namespace {

const std::vector<float> kA = {1.0f, 2.0f, 3.0f, 4.0f};
const std::vector<int32_t> kB = {-7, 0, 42};

std::string intBytes(const std::vector<int32_t> &v) {
  std::string out(v.size() * 4, '\0');
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

const std::string kData = floatBytes(kA) + intBytes(kB); // 28 bytes

std::string entry(const std::string &name, const std::string &dtype,
                  const std::string &shape, const std::string &offsets) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         ",\"data_offsets\":" + offsets + "}";
}

const std::string kEntryA = entry("a", "F32", "[2,2]", "[0,16]");
const std::string kEntryB = entry("b", "I32", "[3]", "[16,28]");
const std::string kHeader = "{" + kEntryA + "," + kEntryB + "}";

std::string validFile() { return safetensorsImage(kHeader, kData); }
/// A file whose header is `{kEntryA, <b>}`.
std::string withB(const std::string &b, const std::string &data = kData) {
  return safetensorsImage("{" + kEntryA + "," + b + "}", data);
}

class TwoContext : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_GROVE_OK(grove_context_create(&two_model, &ctx));
  }
  void TearDown() override { grove_context_destroy(ctx); }

  void expectValues(const std::vector<float> &a,
                    const std::vector<int32_t> &b) {
    DLTensor view;
    ASSERT_GROVE_OK(grove_context_get_weight(ctx, "a", &view));
    EXPECT_EQ(std::vector<float>(static_cast<float *>(view.data),
                                 static_cast<float *>(view.data) + 4),
              a);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(view.data) % 64, 0u);
    ASSERT_GROVE_OK(grove_context_get_weight(ctx, "b", &view));
    EXPECT_EQ(std::vector<int32_t>(static_cast<int32_t *>(view.data),
                                   static_cast<int32_t *>(view.data) + 3),
              b);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(view.data) % 64, 0u);
  }

  grove_context *ctx = nullptr;
  TempDir dir;
};

TEST_F(TwoContext, LoadsValidFileFromMemory) {
  std::string file = validFile();
  EXPECT_EQ(grove_context_weights_ready(ctx), 0);
  ASSERT_GROVE_OK(
      grove_context_load_weights_from_memory(ctx, file.data(), file.size()));
  EXPECT_EQ(grove_context_weights_ready(ctx), 1);
  expectValues(kA, kB);
}

TEST_F(TwoContext, LoadsValidFileFromDisk) {
  dir.write("w.safetensors", validFile());
  ASSERT_GROVE_OK(
      grove_context_load_weights(ctx, dir.file("w.safetensors").c_str()));
  expectValues(kA, kB);
}

TEST_F(TwoContext, AcceptsMetadataPaddingAndReorderedTensors) {
  // Tensors listed and stored in the other order, metadata, trailing spaces
  // in the header, a hole between tensors and unused bytes at the end.
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}," +
                       entry("b", "I32", "[3]", "[0,12]") + "," +
                       entry("a", "F32", "[2,2]", "[16,32]") + "}    ";
  std::string data = intBytes(kB) + "xxxx" + floatBytes(kA) + "tail";
  std::string file = safetensorsImage(header, data);
  ASSERT_GROVE_OK(
      grove_context_load_weights_from_memory(ctx, file.data(), file.size()));
  expectValues(kA, kB);
}

TEST_F(TwoContext, UnalignedMemoryImage) {
  std::string file = " " + validFile();
  ASSERT_GROVE_OK(grove_context_load_weights_from_memory(ctx, file.data() + 1,
                                                         file.size() - 1));
  expectValues(kA, kB);
}

TEST_F(TwoContext, ReloadReplacesWeights) {
  std::string file = validFile();
  ASSERT_GROVE_OK(
      grove_context_load_weights_from_memory(ctx, file.data(), file.size()));
  std::string other =
      safetensorsImage(kHeader, floatBytes({9, 8, 7, 6}) + intBytes({1, 2, 3}));
  ASSERT_GROVE_OK(
      grove_context_load_weights_from_memory(ctx, other.data(), other.size()));
  expectValues({9, 8, 7, 6}, {1, 2, 3});
}

TEST_F(TwoContext, BadPathsAreIoErrors) {
  EXPECT_FAILS(grove_context_load_weights(
                   ctx, dir.file("does-not-exist.safetensors").c_str()),
               GROVE_ERROR_IO, "does-not-exist");
  EXPECT_FAILS(grove_context_load_weights(ctx, dir.path().c_str()),
               GROVE_ERROR_IO, "directory");
  EXPECT_FAILS(grove_context_load_weights(ctx, "/dev/null"), GROVE_ERROR_IO,
               "regular file");
  EXPECT_EQ(grove_context_weights_ready(ctx), 0);
}

TEST_F(TwoContext, NullArguments) {
  EXPECT_FAILS(grove_context_load_weights(ctx, nullptr),
               GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_FAILS(grove_context_load_weights(nullptr, "x"),
               GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_FAILS(grove_context_load_weights_from_memory(ctx, nullptr, 10),
               GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_FAILS(grove_context_load_weights_from_memory(nullptr, "x", 1),
               GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_FAILS(grove_context_load_weights_from_memory(ctx, nullptr, 0),
               GROVE_ERROR_BAD_WEIGHTS, "too short");
}

struct Hostile {
  const char *label;
  std::string bytes;
  const char *needle; // expected in the message
};

class HostileFile : public TwoContext,
                    public ::testing::WithParamInterface<Hostile> {};

TEST_P(HostileFile, RejectedFromMemoryAndDiskLeavingContextUnchanged) {
  const Hostile &h = GetParam();
  // A context without weights stays without weights...
  EXPECT_FAILS(grove_context_load_weights_from_memory(ctx, h.bytes.data(),
                                                      h.bytes.size()),
               GROVE_ERROR_BAD_WEIGHTS, h.needle);
  EXPECT_EQ(grove_context_weights_ready(ctx), 0);
  DLTensor view;
  EXPECT_FAILS(grove_context_get_weight(ctx, "a", &view),
               GROVE_ERROR_BAD_WEIGHTS);

  // ...and one with weights keeps them, byte for byte.
  std::string good = validFile();
  ASSERT_GROVE_OK(
      grove_context_load_weights_from_memory(ctx, good.data(), good.size()));
  dir.write("hostile.safetensors", h.bytes);
  EXPECT_FAILS(
      grove_context_load_weights(ctx, dir.file("hostile.safetensors").c_str()),
      GROVE_ERROR_BAD_WEIGHTS, h.needle);
  EXPECT_EQ(grove_context_weights_ready(ctx), 1);
  expectValues(kA, kB);
}

/// Just the 8-byte length prefix.
std::string lengthOnly(uint64_t n) {
  std::string out;
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  return out;
}

/// The valid file plus `n` empty tensors no param names. The header parse
/// must stay linear in the entries: json::parse with a callback took 415 s
/// for 80,000 of them (about 2 s for this file, the last time it was tried).
std::string manyExtraTensors(int n) {
  std::string header = "{" + kEntryA + "," + kEntryB;
  for (int i = 0; i < n; ++i)
    header += ",\"x" + std::to_string(i) +
              "\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}";
  return safetensorsImage(header + "}", kData);
}

std::string nested(int depth) {
  return "{\"a\":" + std::string(depth, '[') + std::string(depth, ']') + "}";
}

INSTANTIATE_TEST_SUITE_P(
    Runtime, HostileFile,
    ::testing::Values(
        Hostile{"Empty", "", "too short"},
        Hostile{"SevenBytes", std::string("\x10\0\0\0\0\0\0", 7), "too short"},
        Hostile{"HeaderLongerThanFile", lengthOnly(100) + "{}", "larger"},
        Hostile{"HugeHeaderLength", lengthOnly(~uint64_t(0)) + "{}", "limit"},
        Hostile{"HeaderAboveLimit", lengthOnly(100'000'001) + "{}", "limit"},
        Hostile{"HeaderNotJson", safetensorsImage("{not json", kData),
                "not valid JSON"},
        Hostile{"HeaderBinaryGarbage",
                safetensorsImage(std::string("\x00\xff\xfe{", 4), kData),
                "not valid JSON"},
        Hostile{"HeaderTrailingGarbage", safetensorsImage(kHeader + "}", kData),
                "not valid JSON"},
        Hostile{"HeaderEmpty", safetensorsImage("", kData), "not valid JSON"},
        Hostile{"JsonArray", safetensorsImage("[1,2]", kData), "not an object"},
        Hostile{"JsonString", safetensorsImage("\"a\"", kData),
                "not an object"},
        Hostile{"JsonNull", safetensorsImage("null", kData), "not an object"},
        Hostile{"DeepNesting", safetensorsImage(nested(100000), kData),
                "nested"},
        Hostile{"DuplicateKey",
                safetensorsImage(
                    "{" + kEntryA + "," + kEntryA + "," + kEntryB + "}", kData),
                "twice"},
        Hostile{"DuplicateFieldInEntry",
                withB("\"b\":{\"dtype\":\"F32\",\"dtype\":\"I32\","
                      "\"shape\":[3],\"data_offsets\":[16,28]}"),
                "header names 'dtype' twice"},
        Hostile{"ManyExtraTensors", manyExtraTensors(100000),
                "and 99995 more are not a param"},
        Hostile{"EntryNotObject", withB("\"b\":[1]"), "not a JSON object"},
        Hostile{"MissingDtype",
                withB("\"b\":{\"shape\":[3],\"data_offsets\":[16,28]}"),
                "missing 'dtype'"},
        Hostile{"MissingShape",
                withB("\"b\":{\"dtype\":\"I32\",\"data_offsets\":[16,28]}"),
                "missing 'shape'"},
        Hostile{"MissingOffsets",
                withB("\"b\":{\"dtype\":\"I32\",\"shape\":[3]}"),
                "missing 'data_offsets'"},
        Hostile{"DtypeNotString",
                withB(entry("b", "I32", "[3]", "[16,28]").replace(13, 5, "32")),
                "'dtype' is not a string"},
        Hostile{"UnknownDtype", withB(entry("b", "F8_E4M3", "[3]", "[16,28]")),
                "unknown dtype"},
        Hostile{"LowercaseDtype", withB(entry("b", "i32", "[3]", "[16,28]")),
                "unknown dtype"},
        Hostile{"ShapeNotArray", withB(entry("b", "I32", "3", "[16,28]")),
                "not an array"},
        Hostile{"NegativeShape", withB(entry("b", "I32", "[-3]", "[16,28]")),
                "-3"},
        Hostile{"FloatShape", withB(entry("b", "I32", "[3.0]", "[16,28]")),
                "3.0"},
        Hostile{"FractionalShape", withB(entry("b", "I32", "[2.5]", "[16,28]")),
                "2.5"},
        Hostile{"StringShape", withB(entry("b", "I32", "[\"3\"]", "[16,28]")),
                "non-negative"},
        Hostile{"HugeShape", withB(entry("b", "I32", "[1e30]", "[16,28]")),
                "1e+30"},
        Hostile{"ShapeAboveInt64",
                withB(entry("b", "I32", "[18446744073709551615]", "[16,28]")),
                "18446744073709551615"},
        Hostile{
            "ShapeBeyondUint64",
            withB(entry("b", "I32", "[99999999999999999999999]", "[16,28]")),
            "non-negative"},
        Hostile{
            "ShapeProductOverflow",
            withB(entry("b", "I32", "[4294967296,4294967296,16]", "[16,28]")),
            "overflows"},
        Hostile{"ByteSizeOverflow",
                withB(entry("b", "I32", "[4611686018427387904]", "[16,28]")),
                "overflows"},
        Hostile{"SizeMismatch", withB(entry("b", "I32", "[2]", "[16,28]")),
                "needs 8 bytes"},
        Hostile{"OffsetsOutOfRange", withB(entry("b", "I32", "[3]", "[16,40]")),
                "past the data section"},
        Hostile{"OffsetsHuge",
                withB(entry("b", "I32", "[3]",
                            "[18446744073709551604,18446744073709551615]")),
                "past the data section"},
        Hostile{"BeginAfterEnd", withB(entry("b", "I32", "[3]", "[28,16]")),
                "begin 28 > end 16"},
        Hostile{"NegativeOffset", withB(entry("b", "I32", "[3]", "[-12,0]")),
                "data_offsets"},
        Hostile{"OffsetsWrongArity", withB(entry("b", "I32", "[3]", "[16]")),
                "data_offsets"},
        Hostile{"OffsetsNotArray", withB(entry("b", "I32", "[3]", "16")),
                "data_offsets"},
        Hostile{"Overlap", withB(entry("b", "I32", "[3]", "[12,24]")),
                "overlap"},
        Hostile{"MetadataNotObject",
                safetensorsImage("{\"__metadata__\":[]," + kEntryA + "," +
                                     kEntryB + "}",
                                 kData),
                "__metadata__"},
        Hostile{"MetadataNonString",
                safetensorsImage("{\"__metadata__\":{\"k\":1}," + kEntryA +
                                     "," + kEntryB + "}",
                                 kData),
                "'k'"},
        Hostile{"MissingParam", safetensorsImage("{" + kEntryA + "}", kData),
                "missing param 'b'"},
        Hostile{"NoTensors", safetensorsImage("{}", kData),
                "missing params 'a', 'b'"},
        Hostile{"ExtraTensor",
                safetensorsImage("{" + kEntryA + "," + kEntryB + "," +
                                     entry("c", "U8", "[4]", "[28,32]") + "}",
                                 kData + "abcd"),
                "'c' is not a param"},
        Hostile{"WrongShape", withB(entry("b", "I32", "[1,3]", "[16,28]")),
                "param 'b': file has I32 [1, 3], model expects i32 [3]"},
        Hostile{"WrongDtype", withB(entry("b", "F32", "[3]", "[16,28]")),
                "param 'b': file has F32"},
        Hostile{"U8ForI32Param", withB(entry("b", "U8", "[12]", "[16,28]")),
                "param 'b'"}),
    [](const ::testing::TestParamInfo<Hostile> &info) {
      return std::string(info.param.label);
    });

// Random corruption of a valid file must never crash: the result is either a
// successful load or BAD_WEIGHTS with a message.
TEST_F(TwoContext, RandomCorruptionNeverCrashes) {
  std::mt19937 rng(42);
  const std::string good = validFile();
  for (int iter = 0; iter < 3000; ++iter) {
    std::string file = good;
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % file.size();
      switch (rng() % 3) {
      case 0:
        file[pos] = static_cast<char>(rng() & 0xff);
        break;
      case 1:
        file.resize(pos);
        break;
      default:
        file[pos] = "{}[]\",:-0123456789eE."[rng() % 21];
      }
      if (file.empty())
        break;
    }
    grove_status s =
        grove_context_load_weights_from_memory(ctx, file.data(), file.size());
    ASSERT_TRUE(s == GROVE_OK || s == GROVE_ERROR_BAD_WEIGHTS)
        << grove_status_string(s) << " " << grove_last_error();
    if (s != GROVE_OK) {
      ASSERT_NE(std::string(grove_last_error()), "");
    }
  }
}

} // namespace
